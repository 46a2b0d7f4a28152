// the top layer
