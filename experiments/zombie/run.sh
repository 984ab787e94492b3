#!/bin/sh
# The paper's experiments, from the installed package (docs/reproduce.md): run.sh [--scale quick|paper] --out DIR
exec flashlife reproduce zombienand "$@"
