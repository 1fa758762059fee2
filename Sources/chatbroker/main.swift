print("chatbroker")
