print("chatsh")
