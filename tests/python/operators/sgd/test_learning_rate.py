"""LearningRate: every policy (multistep and composite included) and bad arguments. Its device check
is a row of test_op_table.py."""
import numpy as np

from caffe2.python import core, workspace
import caffe2.python.hypothesis_test_util as hu


class TestLearningRate(hu.HypothesisTestCase):
    def run_lr(self, it, **kwargs):
        workspace.FeedBlob("it", np.array([it], dtype=np.int64))
        workspace.RunOperatorOnce(core.CreateOperator("LearningRate", ["it"], ["lr"], **kwargs))
        lr = workspace.FetchBlob("lr")
        self.assertEqual(lr.shape, ())
        return float(lr)

    def test_policies(self):
        self.assertAlmostEqual(self.run_lr(7, base_lr=-0.1, policy="fixed"), -0.1, places=6)
        self.assertAlmostEqual(
            self.run_lr(25, base_lr=1.0, policy="step", stepsize=10, gamma=0.5), 0.25
        )
        self.assertAlmostEqual(self.run_lr(3, base_lr=1.0, policy="exp", gamma=0.5), 0.125)
        self.assertAlmostEqual(
            self.run_lr(4, base_lr=2.0, policy="inv", gamma=0.25, power=1.0), 1.0
        )
        self.assertAlmostEqual(
            self.run_lr(5, base_lr=1.0, policy="poly", power=2.0, max_iter=10), 0.25
        )
        self.assertAlmostEqual(
            self.run_lr(5, base_lr=1.0, policy="linearWarmup", start_multiplier=0.5, num_iter=10),
            0.75,
        )
        self.assertAlmostEqual(
            self.run_lr(20, base_lr=1.0, policy="linearWarmup", start_multiplier=0.5, num_iter=10),
            1.0,
        )
        self.assertAlmostEqual(
            self.run_lr(3, base_lr=1.0, policy="constantWarmup", multiplier=0.2, num_iter=10),
            0.2,
            places=6,
        )
        self.assertEqual(
            self.run_lr(1, base_lr=1.0, policy="alter", active_period=2, inactive_period=3), 1.0
        )
        self.assertEqual(
            self.run_lr(3, base_lr=1.0, policy="alter", active_period=2, inactive_period=3), 0.0
        )
        self.assertAlmostEqual(
            self.run_lr(
                12,
                base_lr=1.0,
                policy="hill",
                num_iter=10,
                start_multiplier=0.1,
                gamma=0.5,
                power=1.0,
                end_multiplier=0.1,
            ),
            0.5,
        )

    def test_bad_arguments(self):
        with self.assertRaisesRegex(RuntimeError, "unknown learning rate policy 'nope'"):
            self.run_lr(1, base_lr=1.0, policy="nope")
        with self.assertRaisesRegex(RuntimeError, "positive 'stepsize'"):
            self.run_lr(1, base_lr=1.0, policy="step")
        with self.assertRaisesRegex(RuntimeError, "base_lr"):
            self.run_lr(1, policy="fixed")


class TestLearningRatePolicies(hu.HypothesisTestCase):
    def lr(self, it, **kwargs):
        workspace.FeedBlob("it", np.array([it], dtype=np.int64))
        workspace.RunOperatorOnce(core.CreateOperator("LearningRate", ["it"], ["lr"], **kwargs))
        return float(workspace.FetchBlob("lr"))

    def test_multistep(self):
        kw = dict(base_lr=1.0, policy="multistep", stepsizes=[10, 25, 40], gamma=0.5)
        for it, want in [(0, 1.0), (9, 1.0), (10, 0.5), (24, 0.5), (25, 0.25), (100, 0.125)]:
            self.assertAlmostEqual(self.lr(it, **kw), want, places=6)

    def test_composite(self):
        kw = dict(
            base_lr=2.0,
            policy="composite",
            sub_policy_num_iters=[5, 10],
            sub_policy_0_policy="linearWarmup",
            sub_policy_0_start_multiplier=0.5,
            sub_policy_0_num_iter=5,
            sub_policy_1_policy="step",
            sub_policy_1_stepsize=4,
            sub_policy_1_gamma=0.1,
            sub_policy_1_lr_scale=0.5,
        )
        self.assertAlmostEqual(self.lr(0, **kw), 1.0, places=6)
        self.assertAlmostEqual(self.lr(4, **kw), 2.0 * (0.5 + 0.5 * 4 / 5), places=6)
        self.assertAlmostEqual(self.lr(5, **kw), 1.0, places=6)
        self.assertAlmostEqual(self.lr(9, **kw), 0.1, places=6)
        # The last sub-policy keeps running past its count.
        self.assertAlmostEqual(self.lr(5 + 12, **kw), 1.0 * 0.1**3, places=6)

    def test_bad_policies(self):
        with self.assertRaisesRegex(
            RuntimeError, r"'stepsizes' must be increasing, got 10 before 5"
        ):
            self.lr(0, base_lr=1.0, policy="multistep", stepsizes=[10, 5], gamma=0.5)
        with self.assertRaisesRegex(RuntimeError, r"missing 'sub_policy_1_policy'"):
            self.lr(
                0,
                base_lr=1.0,
                policy="composite",
                sub_policy_num_iters=[3, 3],
                sub_policy_0_policy="fixed",
            )
        with self.assertRaisesRegex(RuntimeError, r"policy 'step' needs a positive 'stepsize'"):
            self.lr(
                0,
                base_lr=1.0,
                policy="composite",
                sub_policy_num_iters=[3],
                sub_policy_0_policy="step",
            )
        with self.assertRaisesRegex(RuntimeError, r"cannot contain another composite"):
            self.lr(
                0,
                base_lr=1.0,
                policy="composite",
                sub_policy_num_iters=[3],
                sub_policy_0_policy="composite",
            )
