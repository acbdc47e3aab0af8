#!/usr/bin/env bash
# Runs the end-to-end bench (benches/e2e.rs) with two peer MCP servers from PyPI beside
# forgelens, against the same fake forge, so one run gives the side-by-side table of
# docs/performance.md.
#
# Usage: scripts/bench-peers.sh [e2e options, e.g. --reads 500 --out target/bench-peers/report.md]
#
# Each peer is installed into its own virtualenv under target/bench-peers/ (nothing of theirs is
# committed). How each one is started, which variables name the forge and the token, and which
# tools get an issue, list labels and get a commit is read from its installed files; a peer
# that cannot be installed or lacks what the bench needs is passed on as unavailable, and the
# driver reports it and goes on. Needs python3 and PyPI; forgelens's own run needs neither.
set -euo pipefail
cd "$(dirname "$0")/.."

work=target/bench-peers
peers=$work/peers.json
mkdir -p "$work"

# One virtualenv per peer: their dependencies disagree (gitea-mcp's fastmcp wants mcp<2,
# gitea-toolkit-mcp wants mcp 2), so one shared environment breaks one of them.
installed=()
for package in gitea-mcp gitea-toolkit-mcp; do
    venv=$work/$package
    if { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
        "$venv/bin/pip" install --quiet --disable-pip-version-check "$package"; then
        installed+=("$package")
    else
        echo "bench-peers: $package could not be installed; it is reported as unavailable" >&2
    fi
done

# Reads each peer's installed package and writes the driver's peer file. The strings {forge},
# {token}, {owner}, {repo}, {sha}, "{issue}" are filled in by the driver.
python3 - "$peers" "$work" "${installed[@]}" <<'PY'
import json
import pathlib
import sys

out, work, installed = sys.argv[1], pathlib.Path(sys.argv[2]).resolve(), set(sys.argv[3:])


def package_dir(package, module):
    """Where `module` of `package` is installed in that package's own virtualenv."""
    found = sorted((work / package).glob(f"lib/python*/site-packages/{module}/__init__.py"))
    return found[0].parent if found else None


def version(package, module):
    dist = sorted((work / package).glob(f"lib/python*/site-packages/{module}-*.dist-info"))
    return dist[0].name[len(module) + 1:-len(".dist-info")] if dist else "?"


def source(root):
    """Every Python file of the package, concatenated: what the checks below search."""
    return "\n".join(p.read_text(errors="replace") for p in sorted(root.rglob("*.py")))


def has(text, *needles):
    return all(n in text for n in needles)


entries = []

# gitea-mcp: FastMCP; GITEA_URL and GITEA_TOKEN (config.py); tools are the function names.
name = "gitea-mcp"
root = package_dir(name, "gitea_mcp") if name in installed else None
if root is None:
    entries.append({"name": name, "unavailable": "not installed"})
else:
    text = source(root)
    label = f"{name} {version(name, 'gitea_mcp')}"
    if not has(text, '"GITEA_URL"', '"GITEA_TOKEN"'):
        entries.append({"name": label, "unavailable": "its configuration variables changed"})
    else:
        ops = {}
        if "async def get_issue(" in text and "issue_number" in text:
            ops["issue"] = {"tool": "get_issue",
                            "arguments": {"owner": "{owner}", "repo": "{repo}", "issue_number": "{issue}"}}
        if "async def list_labels(" in text:
            ops["labels"] = {"tool": "list_labels", "arguments": {"owner": "{owner}", "repo": "{repo}"}}
        if "async def get_commit(" in text:
            ops["commit"] = {"tool": "get_commit",
                             "arguments": {"owner": "{owner}", "repo": "{repo}", "sha": "{sha}"}}
        entries.append({
            "name": label,
            "command": str(work / name / "bin" / "gitea-mcp"),
            "env": {"GITEA_URL": "{forge}", "GITEA_TOKEN": "{token}"},
            "ops": ops,
        })

# gitea-toolkit-mcp: GITEA_SERVER_URL and GITEA_TOKEN (cli.py); tools named gitea_*.
name = "gitea-toolkit-mcp"
root = package_dir(name, "gitea_toolkit_mcp") if name in installed else None
if root is None:
    entries.append({"name": name, "unavailable": "not installed"})
else:
    text = source(root)
    label = f"{name} {version(name, 'gitea_toolkit_mcp')}"
    if not has(text, '"GITEA_SERVER_URL"', '"GITEA_TOKEN"'):
        entries.append({"name": label, "unavailable": "its configuration variables changed"})
    else:
        ops = {}
        if 'name="gitea_get_issue"' in text:
            ops["issue"] = {"tool": "gitea_get_issue",
                            "arguments": {"owner": "{owner}", "repo": "{repo}", "index": "{issue}"}}
        if 'name="gitea_list_labels"' in text:
            ops["labels"] = {"tool": "gitea_list_labels", "arguments": {"owner": "{owner}", "repo": "{repo}"}}
        if 'name="gitea_get_commit"' in text:
            ops["commit"] = {"tool": "gitea_get_commit",
                             "arguments": {"owner": "{owner}", "repo": "{repo}", "sha": "{sha}"}}
        entries.append({
            "name": label,
            "command": str(work / name / "bin" / "gitea-toolkit-mcp"),
            "env": {"GITEA_SERVER_URL": "{forge}", "GITEA_TOKEN": "{token}"},
            "ops": ops,
        })

pathlib.Path(out).write_text(json.dumps(entries, indent=2) + "\n")
for e in entries:
    what = e.get("unavailable") or ", ".join(f"{k} → {v['tool']}" for k, v in e["ops"].items()) or "no comparable tool"
    print(f"bench-peers: {e['name']}: {what}", file=sys.stderr)
PY

exec cargo bench --bench e2e -- --peers "$peers" "$@"
