"""Command-line dataset tools: make_image_db, make_fashion_mnist_db (run with ``python3 -m``)."""
