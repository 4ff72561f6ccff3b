"""The demo: a real LangGraph agent over real local data (`python -m langchain_result_layer demo`)."""
