"""Recurrent cells and the functions that build recurrent networks from them (upstream's
caffe2.python.rnn_cell API).

    hidden_all, hidden_last, cell_all, cell_last = rnn_cell.LSTM(
        model, input_blob, seq_lengths, (hidden_init, cell_init),
        dim_in, dim_out, scope="LSTM")

The implementation is split by purpose: rnn_cell_base (RNNCell, DropoutCell, MultiRNNCell,
UnrolledCell), rnn_cell_lstm (BasicRNNCell, the LSTM cells, LSTM/MILSTM/..., the parameter
helpers) and rnn_cell_attention (the attention cells and LSTMWithAttention). The GRU is in
caffe2.python.gru_cell, the attention mechanisms in caffe2.python.attention.
"""
from caffe2.python.attention import AttentionType  # noqa: F401 (upstream name)
from caffe2.python.rnn_cell_attention import (  # noqa: F401 (upstream names)
    AttentionCell,
    LSTMWithAttention,
    LSTMWithAttentionCell,
    MILSTMWithAttentionCell,
)
from caffe2.python.rnn_cell_base import (  # noqa: F401 (upstream names)
    DropoutCell,
    LSTMInitializer,
    MultiRNNCell,
    MultiRNNCellInitializer,
    RNNCell,
    UnrolledCell,
    _RectifyName,
    _RectifyNames,
)
from caffe2.python.rnn_cell_lstm import (  # noqa: F401 (upstream names)
    LSTM,
    MILSTM,
    BasicRNN,
    BasicRNNCell,
    GetLSTMParamNames,
    InitFromLSTMParams,
    LayerNormLSTM,
    LayerNormLSTMCell,
    LayerNormMILSTM,
    LayerNormMILSTMCell,
    LSTMCell,
    MILSTMCell,
    _LSTM,
    cudnn_LSTM,
)
