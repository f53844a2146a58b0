"""NetModifier: the base of the classes that add ops to a net after it is built (gradient
clipping, ...). A subclass implements modify_net; calling the modifier applies it:

    modifier = GradientClipping(grad_clip_method="by_norm")
    modifier(model.net, grad_map=grad_map)
"""
import abc


class NetModifier(metaclass=abc.ABCMeta):
    """Adds ops to a net. Subclasses implement `modify_net`."""

    def __init__(self):
        pass

    @abc.abstractmethod
    def modify_net(
        self, net, init_net=None, grad_map=None, blob_to_device=None, modify_output_record=False
    ):
        """Adds this modifier's ops to `net` (and, where it needs some, to `init_net`).
        grad_map: {param: gradient} as AddGradientOperators returns it; blob_to_device:
        {blob name: DeviceOption}."""

    def __call__(
        self, net, init_net=None, grad_map=None, blob_to_device=None, modify_output_record=False
    ):
        self.modify_net(
            net,
            init_net=init_net,
            grad_map=grad_map,
            blob_to_device=blob_to_device,
            modify_output_record=modify_output_record,
        )
        return net
