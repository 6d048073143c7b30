"""Lint the CloudFormation template `serverless package` writes: cfn-lint and checkov, offline.

Each finding is a (tool, rule or check ID, logical ID) triple. It passes only when an entry of
``infra/lint-noise.toml`` names it with a one-line reason; an entry that names nothing found in
any configuration is stale and fails the run too, so the list says what the template is today:

1. the service is copied to a temporary folder (node_modules linked, as in
   tests/test_serverless_package.py) and packaged twice, with no AWS credentials: the defaults,
   and everything on (many workspaces, Kroger prices, the alarm email, the weekly run, a webhook);
2. cfn-lint runs with the serverless rules (``-a cfn_lint_serverless.rules``) and informational
   findings, checkov with ``--skip-download`` (else it asks Prisma Cloud for its policy metadata)
   and ``CKV_SKIP_PACKAGE_UPDATE_CHECK`` (else its banner asks PyPI for a newer version);
3. every finding is matched against the noise list; what is left, and every stale entry, is
   printed, one a line, and the exit status is 1.

    .venv/bin/python infra/lint_template.py          (make lint; the linters in .venv/iac)

The linters live in their own venv (infra/requirements-iac.txt): checkov pins boto3 and packaging
below the project's own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOISE_FILE = Path(__file__).with_name("lint-noise.toml")
TEMPLATE = Path(".serverless") / "cloudformation-template-update-stack.json"
TOOLS = ("cfn-lint", "checkov")
TIMEOUT = 600
REGION = "eu-west-1"
# The everything-on configuration: each optional part of serverless.yml switched on.
EVERYTHING_ON = {
    "WORKSPACES": "many", "SHOP_TEAM": "T0123456", "PRICES": "kroger",
    "ALARM_EMAIL": "ops@example.com",
    "SHOP_SCHEDULE": "cron(0 9 ? * SAT *)", "SHOP_CHANNEL": "C0123456789", "SHOP_REQUEST": "tacos",
    "ORDER_DESTINATION": "webhook", "ORDER_WEBHOOK_URL": "https://example.com/hook",
}  # fmt: skip
CONFIGURATIONS = {"defaults": {}, "everything on": EVERYTHING_ON}
PACKAGE = ("npx", "--no-install", "serverless", "package", "--stage", "lint", "--region", REGION)
CFN_LINT = ("cfn-lint", "--format", "json", "--include-checks", "I", "--regions", REGION,
            "-a", "cfn_lint_serverless.rules", "--", str(TEMPLATE))  # fmt: skip
CHECKOV = ("checkov", "-f", str(TEMPLATE), "--framework", "cloudformation", "--skip-download",
           "-o", "json", "--quiet")  # fmt: skip
# Kept from this environment (what finds node, npm, pip and a proxy); then these are set.
KEPT = ("PATH", "HOME", "LANG", "TMPDIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
KEPT_PREFIXES = ("LC_", "XDG_", "NODE_", "NPM_CONFIG_", "PIP_", "HTTP_PROXY", "HTTPS_PROXY",
                 "NO_PROXY")  # fmt: skip
QUIET = {
    "AWS_ACCESS_KEY_ID": "",  # no credentials: packaging must not need them
    "AWS_SECRET_ACCESS_KEY": "",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "SLS_TELEMETRY_DISABLED": "1",
    "SLS_NOTIFICATIONS_MODE": "off",
    "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true",  # else checkov's banner asks PyPI (no cache)
}


class NoiseListError(ValueError):
    """A lint-noise.toml entry lacks a field, names an unknown tool, or its why is not one line."""


@dataclass(frozen=True)
class Finding:
    tool: str
    id: str
    resource: str  # a logical ID (resource, condition, output), or "" for the whole template
    message: str
    line: int

    def __str__(self) -> str:
        message = " ".join(self.message.split())
        return f"{self.tool} {self.id} {self.resource or '-'}: {message} (line {self.line})"


@dataclass(frozen=True)
class Noise:
    tool: str
    id: str
    resources: tuple[str, ...]  # logical IDs, or ("*",) when the reason holds for every one
    why: str

    def matches(self, f: Finding) -> bool:
        named = f.resource in self.resources or "*" in self.resources
        return (f.tool, f.id) == (self.tool, self.id) and named

    def __str__(self) -> str:
        return f"{self.tool} {self.id} {', '.join(self.resources)}"


def load_noise(text: str) -> list[Noise]:
    """The ``[[noise]]`` entries of a lint-noise.toml text; raises NoiseListError."""
    entries = []
    for number, entry in enumerate(tomllib.loads(text).get("noise", []), start=1):
        missing = [key for key in ("tool", "id", "resource", "why") if not entry.get(key)]
        if missing:
            raise NoiseListError(f"noise entry {number} has no {', '.join(missing)}")
        tool, id_, resource, why = entry["tool"], entry["id"], entry["resource"], entry["why"]
        if tool not in TOOLS:
            raise NoiseListError(f"noise entry {number}: unknown tool {tool!r}")
        if not isinstance(why, str) or not why.strip() or "\n" in why.strip():
            raise NoiseListError(f"noise entry {number} ({id_}): why must be one line of text")
        resources = (resource,) if isinstance(resource, str) else tuple(resource)
        if not all(isinstance(name, str) and name for name in resources):
            raise NoiseListError(f"noise entry {number} ({id_}): resource must name logical IDs")
        entries.append(Noise(tool, id_, resources, why.strip()))
    return entries


def unmatched(findings: Iterable[Finding], noise: list[Noise]) -> list[Finding]:
    """The findings no noise entry names."""
    return [f for f in findings if not any(entry.matches(f) for entry in noise)]


def stale(noise: list[Noise], findings: list[Finding]) -> list[Noise]:
    """The entries that name none of the findings (pass every configuration's together)."""
    return [entry for entry in noise if not any(entry.matches(f) for f in findings)]


def cfn_lint_findings(output: str) -> list[Finding]:
    """cfn-lint's ``--format json``: a list of matches, each with a path into the template."""
    findings = []
    for match in json.loads(output or "[]"):
        path = match["Location"]["Path"] or []
        resource = str(path[1]) if len(path) > 1 else ""
        line = match["Location"]["Start"]["LineNumber"]
        findings.append(Finding("cfn-lint", match["Rule"]["Id"], resource, match["Message"], line))
    return findings


def checkov_findings(output: str) -> list[Finding]:
    """checkov's ``-o json``: one report (a list when several frameworks ran), failed checks in
    ``results``; a resource is named ``<Type>.<LogicalId>``."""
    reports = json.loads(output or "{}")
    return [
        Finding("checkov", check["check_id"], check["resource"].split(".", 1)[-1],
                check["check_name"], check["file_line_range"][0])
        for report in (reports if isinstance(reports, list) else [reports])
        for check in report.get("results", {}).get("failed_checks", [])
    ]  # fmt: skip


def service_copy(where: Path) -> Path:
    """A copy of the service to package in ``where`` (node_modules linked), so the repository's
    own .serverless/ is left alone; shared with tests/test_serverless_package.py."""
    where.mkdir()
    for name in ("serverless.yml", "package.json", "package-lock.json"):
        shutil.copy2(ROOT / name, where / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("infra", "workflow", "bot"):
        shutil.copytree(ROOT / name, where / name, ignore=ignore)
    (where / "node_modules").symlink_to(ROOT / "node_modules", target_is_directory=True)
    return where


def _environment(extra: dict[str, str]) -> dict[str, str]:
    """A clean environment: no AWS credentials, none of the deploy's settings (serverless.yml
    reads dozens), no CKV_SKIP_CHECK."""
    env = {k: v for k, v in os.environ.items() if k in KEPT or k.upper().startswith(KEPT_PREFIXES)}
    # PYTHON_BIN: the requirements plugin's pip, and infra/bytecode.py (needs python3.11).
    return env | QUIET | {"PYTHON_BIN": sys.executable} | extra


def _start(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def lint(name: str, extra: dict[str, str], work: Path, iac: Path) -> list[Finding]:
    """Package one configuration, then run both linters (at once) on its template."""
    service = service_copy(work / name.replace(" ", "-"))
    env = _environment(extra)
    packaging = _start(list(PACKAGE), service, env)
    out, err = packaging.communicate(timeout=TIMEOUT)
    if packaging.returncode != 0 or not (service / TEMPLATE).exists():
        raise SystemExit(f"{name}: serverless package failed\n{out}{err}")
    cfn_lint = _start([str(iac / CFN_LINT[0]), *CFN_LINT[1:]], service, env)
    checkov = _start([str(iac / CHECKOV[0]), *CHECKOV[1:]], service, env)
    cfn_out, cfn_err = cfn_lint.communicate(timeout=TIMEOUT)
    checkov_out, checkov_err = checkov.communicate(timeout=TIMEOUT)
    # cfn-lint exits 0 or a sum of 2 (errors), 4 (warnings), 8 (informational); checkov 0 or 1.
    if cfn_lint.returncode & 1 or cfn_lint.returncode < 0 or checkov.returncode not in (0, 1):
        raise SystemExit(f"{name}: a linter failed to run\n{cfn_err}{checkov_err}")
    return cfn_lint_findings(cfn_out) + checkov_findings(checkov_out)


def report(found: dict[str, list[Finding]], noise: list[Noise]) -> tuple[list[str], bool]:
    """The lines to print for each configuration's findings, and whether the lint failed."""
    lines, failed = [], False
    for name, findings in found.items():
        left = unmatched(findings, noise)
        lines += [f"{name}: not listed: {finding}" for finding in left]
        by_id = ", ".join(f"{i} {n}" for i, n in sorted(Counter(f.id for f in findings).items()))
        listed = len(findings) - len(left)
        lines.append(f"{name}: {len(findings)} findings, {listed} listed as noise ({by_id})")
        failed = failed or bool(left)
    for entry in stale(noise, [f for findings in found.values() for f in findings]):
        lines.append(f"stale noise entry: {entry}: it matched nothing in any configuration")
        failed = True
    if failed:
        lines.append(
            f"Fix each finding not listed in serverless.yml, or list it in infra/{NOISE_FILE.name}"
            " with a one-line reason; remove a stale entry."
        )
    return lines, failed


def main() -> int:
    iac = Path(sys.prefix) / "iac" / "bin"  # make lint builds it (infra/requirements-iac.txt)
    if not (iac / "checkov").exists():
        raise SystemExit(f"no linters in {iac}: run make lint, which installs them")
    noise = load_noise(NOISE_FILE.read_text())
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lint-template-") as work:
        found = {name: lint(name, extra, Path(work), iac) for name, extra in CONFIGURATIONS.items()}
    lines, failed = report(found, noise)
    print("\n".join(lines))
    print(f"template lint: {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
