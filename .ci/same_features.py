"""Checks that the Python package built with its `workspace` feature resolves every third-party
crate it uses with the features `cargo test --workspace` gives that crate (py/Cargo.toml says why:
maturin then reuses the test build instead of compiling about 120 crates again). The workspace's
own crates are left out: the package is built against them with its own features, as a user's
build is. Prints the crates that differ and exits 1 if any does.

Run from the repository's root: python3 .ci/same_features.py
"""

import json
import re
import subprocess
import sys


def cargo(*args: str) -> str:
    """What `cargo ARGS` prints; its errors, and an exit, if it fails."""
    r = subprocess.run(["cargo", *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"cargo {' '.join(args)} failed:\n{r.stderr}")
    return r.stdout


def features(*args: str) -> dict[str, set[str]]:
    """Each package of `cargo tree ARGS` (name and version) and the features it is built with."""
    out = cargo("tree", "--locked", *args, "-f", "{p} {f}", "--prefix", "none")
    found: dict[str, set[str]] = {}
    for line in out.splitlines():
        # "name vX.Y.Z [(proc-macro)] [(path)] [feature,feature] [(*)]"
        line = re.sub(r" \([^)]*\)", "", line).strip()
        if not line:
            continue
        name, version, *rest = line.split(" ")
        found.setdefault(f"{name} {version}", set()).update(f for f in "".join(rest).split(",") if f)
    return found


def members() -> set[str]:
    """The names of the workspace's own packages."""
    out = cargo("metadata", "--locked", "--no-deps", "--format-version", "1")
    return {p["name"] for p in json.loads(out)["packages"]}


def main() -> int:
    own = members()
    package = features("-p", "logspec-python", "--features", "workspace", "-e", "normal,build")
    workspace = features("--workspace", "-e", "normal,build,dev")
    differ = {k: sorted(workspace.get(k, set()) - v) for k, v in package.items()}
    differ = {k: v for k, v in differ.items() if v and k.split(" ")[0] not in own}
    for k, v in sorted(differ.items()):
        print(f"{k}: the workspace adds {', '.join(v)}", file=sys.stderr)
    if differ:
        print(
            "add these to the `workspace` feature of py/Cargo.toml, or maturin compiles each "
            "crate that depends on them again",
            file=sys.stderr,
        )
        return 1
    print(f"the Python package's {len(package)} crates have the workspace's features (its own crates left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
