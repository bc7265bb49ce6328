"""The profiles: one package per specification the kit implements, each its catalogue (catalogue.toml), its
checks (one module per section of the spec) and the object that describes it to the kit (docs/architecture.md)."""
