// RUN: lmc-opt %s -verify-diagnostics -lmc-optimizer=optimizer=lion

// expected-error @+1 {{unknown optimizer 'lion'; expected sgd, momentum, adam or adamw}}
module {
}
