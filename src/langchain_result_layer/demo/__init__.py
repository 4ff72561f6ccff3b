"""The demo: a real LangGraph agent over real local data.

Run it with `python -m langchain_result_layer demo`.
"""
