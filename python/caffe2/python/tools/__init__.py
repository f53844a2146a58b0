"""Command-line tools (run with ``python3 -m``): the dataset tools make_image_db and
make_fashion_mnist_db, and plot_log, which plots the trainer's per-iteration metrics logs."""
