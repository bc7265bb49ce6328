"""Client checks of the draft's section: transport. Nothing here: over TCP the order of what a client receives
is the server side's to show (net.transport.3), and the transport items are declared with the server checks."""
