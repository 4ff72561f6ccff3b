"""LangChain and LangGraph adapters: post-processor, tool wrapper, truncation node, budget guard, middleware, fetch tool."""
