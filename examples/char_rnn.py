"""A character-level LSTM language model, trained with truncated backpropagation through time.

The model is caffe2.python.rnn_cell.LSTM (a RecurrentNetwork of LSTMUnit steps) over one-hot
characters, a per-step FC to the alphabet and a softmax; the loss is the cross entropy of the next
character. `batch_size` streams read the text from evenly spaced places, each carrying its LSTM
state from one `seq_length` window to the next.

    python examples/char_rnn.py [--train_data FILE] [--seq_length 25] [--batch_size 1]
        [--iters_to_report 500] [--hidden_size 100] [--iterations 0] [--gen_length 500]
        [--seed 0]

The default text, the GNU GPL version 3, ships with every Debian system. Every --iters_to_report
iterations the script prints

    Iteration <n>: loss <mean loss per window> per char <the same per character> smooth <loss>

(smooth: an exponential average of the window loss, from that of uniform guessing) and then
--gen_length characters sampled from the model between "----- sample -----" and
"----- end sample -----". --iterations 0 trains until interrupted. The command line is
upstream's char_rnn.py's.
"""
import argparse
import sys
import time

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, workspace
from caffe2.python.optimizer import build_sgd
from caffe2.python.rnn_cell import LSTM

DEFAULT_TEXT = "/usr/share/common-licenses/GPL-3"


class Alphabet(object):
    """The characters of a text, sorted (so that ids do not depend on the hash seed)."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.ids = {ch: i for i, ch in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        return np.array([self.ids[ch] for ch in text], dtype=np.int32)


def one_hot(ids, size):
    """ids (T, N) -> float32 (T, N, size)."""
    out = np.zeros(ids.shape + (size,), dtype=np.float32)
    np.put_along_axis(out, ids[..., None], 1.0, axis=-1)
    return out


class CharLSTM(object):
    """The training net, its forward part for sampling, and the state carried between windows."""

    def __init__(self, vocab_size, hidden_size, batch_size, seq_length):
        self.V, self.H, self.N, self.T = vocab_size, hidden_size, batch_size, seq_length
        model = model_helper.ModelHelper(name="char_lstm")
        x, lengths, h0, c0, target = model.net.AddExternalInputs(
            "chars", "lengths", "hidden_init", "cell_init", "target"
        )
        hidden_all, self.hidden_last, _, self.cell_last = LSTM(
            model, x, lengths, (h0, c0), self.V, self.H, scope="lstm"
        )
        logits = brew.fc(model, hidden_all, "logits", dim_in=self.H, dim_out=self.V, axis=2)
        self.probs = model.net.Softmax(logits, "probs", axis=2)
        self.sample_net = core.Net(model.net.Proto())  # the forward pass alone
        flat, _ = model.net.Reshape(
            self.probs, ["probs_flat", "probs_old_shape"], shape=[-1, self.V]
        )
        xent = model.net.LabelCrossEntropy([flat, target], "xent")
        self.loss = model.net.AveragedLoss(xent, "loss")
        model.AddGradientOperators([self.loss])
        # The loss is a mean over the T steps of a window: scale the rate by T.
        build_sgd(model, base_learning_rate=0.1 * self.T, policy="step", stepsize=1, gamma=0.9999)
        self.model = model
        # Each run starts where the previous one ended.
        self.carry = core.Net("carry_state")
        self.carry.Copy(self.hidden_last, h0)
        self.carry.Copy(self.cell_last, c0)

    def initialize(self):
        workspace.RunNetOnce(self.model.param_init_net)
        for blob in (self.hidden_last, self.cell_last):
            workspace.FeedBlob(blob, np.zeros((1, self.N, self.H), np.float32))
        # The nets are made once, before the first run, from inputs of the right kind.
        workspace.FeedBlob("chars", np.zeros((self.T, self.N, self.V), np.float32))
        workspace.FeedBlob("lengths", np.full(self.N, self.T, np.int32))
        workspace.FeedBlob("target", np.zeros(self.T * self.N, np.int32))
        workspace.RunNetOnce(self.carry)
        for net in (self.carry, self.model.net, self.sample_net):
            workspace.CreateNet(net)

    def train_step(self, inputs, targets):
        """inputs, targets: (T, N) ids; returns the mean loss per character of the window."""
        workspace.FeedBlob("lengths", np.full(self.N, self.T, np.int32))
        workspace.RunNet(self.carry.Name())
        workspace.FeedBlob("chars", one_hot(inputs, self.V))
        workspace.FeedBlob("target", targets.reshape(-1))
        workspace.RunNet(self.model.net.Name())
        return float(workspace.FetchBlob(self.loss))

    def sample(self, first, length, rng):
        """`length` ids drawn one at a time after `first`, on stream 0, from a state that
        continues the training's; the training state is restored afterwards."""
        saved = [workspace.FetchBlob(b) for b in (self.hidden_last, self.cell_last)]
        ids = [first]
        workspace.FeedBlob("lengths", np.ones(self.N, np.int32))
        for _ in range(length):
            workspace.RunNet(self.carry.Name())
            chars = np.zeros((1, self.N), np.int32)
            chars[0, 0] = ids[-1]
            workspace.FeedBlob("chars", one_hot(chars, self.V))
            workspace.RunNet(self.sample_net.Name())
            p = workspace.FetchBlob(self.probs)[0, 0].astype(np.float64)
            ids.append(int(rng.choice(self.V, p=p / p.sum())))
        for blob, value in zip((self.hidden_last, self.cell_last), saved):
            workspace.FeedBlob(blob, value)
        return ids


def train(args):
    with open(args.train_data, encoding="utf-8", errors="replace") as f:
        text = f.read()
    alphabet = Alphabet(text)
    ids = alphabet.encode(text)
    print("Input has {} characters. Total input size: {}".format(len(alphabet), len(text)))
    rng = np.random.RandomState(args.seed)
    net = CharLSTM(len(alphabet), args.hidden_size, args.batch_size, args.seq_length)
    net.initialize()

    T, N = args.seq_length, args.batch_size
    starts = np.arange(N) * (len(ids) // N)  # stream n reads from starts[n] on, wrapping around
    offsets = np.arange(T + 1)[:, None]
    smooth = np.log(len(alphabet)) * T  # the window loss of uniform guessing
    total, count, iteration, tick = 0.0, 0, 0, time.time()
    while args.iterations <= 0 or iteration < args.iterations:
        window = ids[(starts[None, :] + offsets) % len(ids)]  # (T + 1, N)
        loss = net.train_step(window[:-1], window[1:]) * T
        starts += T
        iteration += 1
        smooth = 0.999 * smooth + 0.001 * loss
        total, count = total + loss, count + 1
        if iteration % args.iters_to_report == 0:
            elapsed = max(time.time() - tick, 1e-9)
            print("Characters per second: {}".format(int(count * T * N / elapsed)))
            print(
                "Iteration {}: loss {:.4f} per char {:.4f} smooth {:.4f}".format(
                    iteration, total / count, total / count / T, smooth
                )
            )
            first = int(rng.randint(len(alphabet)))
            sampled = net.sample(first, args.gen_length, rng)
            print("----- sample -----")
            print("".join(alphabet.chars[i] for i in sampled))
            print("----- end sample -----")
            sys.stdout.flush()
            total, count, tick = 0.0, 0, time.time()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a character-level LSTM on a text.")
    parser.add_argument("--train_data", default=DEFAULT_TEXT, help="the text (%(default)s)")
    parser.add_argument("--seq_length", type=int, default=25, help="characters per window")
    parser.add_argument("--batch_size", type=int, default=1, help="parallel streams")
    parser.add_argument("--iters_to_report", type=int, default=500, help="iterations per report")
    parser.add_argument("--hidden_size", type=int, default=100, help="LSTM state size")
    parser.add_argument("--iterations", type=int, default=0, help="0: until interrupted")
    parser.add_argument("--gen_length", type=int, default=500, help="characters per sample")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and sampler")
    parser.add_argument("--gpu", action="store_true", help="train on GPU 0")
    args = parser.parse_args(argv)
    if args.gpu and "RecurrentNetwork" not in workspace.C.registered_cuda_operators():
        parser.error("--gpu: this build has no CUDA RecurrentNetwork operator")
    return args


def main(argv=None):
    args = parse_args(argv)
    device = core.DeviceOption(caffe2_pb2.CUDA if args.gpu else caffe2_pb2.CPU, 0)
    device.random_seed = args.seed  # repeatable weight fills
    with core.DeviceScope(device):
        train(args)


if __name__ == "__main__":
    workspace.GlobalInit(["caffe2", "--caffe2_log_level=2"])
    main()
