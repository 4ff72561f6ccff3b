"""Pure core of the result layer: budgets, token counting, truncation, views, the guard.

Nothing in this package imports LangChain or LangGraph; adapters translate between LangChain
objects and these plain data structures.
"""
