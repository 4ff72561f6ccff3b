"""Command-line interface: `python -m langchain_result_layer {demo,inspect}`."""
