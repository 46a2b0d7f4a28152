// nowhere
