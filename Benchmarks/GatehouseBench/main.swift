print("gatehouse-bench")
