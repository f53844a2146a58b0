"""Puts this folder on sys.path, so the op tests in its family folders import the shared
device-check helpers (`from device_check import ...`)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
