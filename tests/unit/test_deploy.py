"""The proxy in deploy/ lets through every upload the app accepts: nginx's body cap against the app's upload caps."""

import re
import tomllib
from pathlib import Path

from attnlab.limits import MAX_ATTN_UPLOAD_MB, MAX_UPLOAD_MB

ROOT = Path(__file__).resolve().parents[2]
FRAMING_MB = 1  # a multipart body's boundaries and part headers: the margin Streamlit's own upload route allows
UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}  # nginx sizes: bytes, or k/m/g (binary, case-insensitive)


def nginx_body_cap(conf: str) -> int:
    """The one `client_max_body_size` in an nginx file, in bytes."""
    found = re.findall(r"^\s*client_max_body_size\s+(\d+)([kmgKMG]?)\s*;", conf, flags=re.MULTILINE)
    assert len(found) == 1, f"expected one client_max_body_size, found {found}"
    number, unit = found[0]
    return int(number) * UNITS[unit.lower()]


def test_nginx_body_size_parses_its_units():
    assert nginx_body_cap("  client_max_body_size 73m;") == 73 * 2**20
    assert nginx_body_cap("client_max_body_size 512K;\n") == 512 * 2**10
    assert nginx_body_cap("client_max_body_size 1000;") == 1000


def test_the_proxy_lets_through_the_apps_largest_upload_and_no_more():
    """A 3 MB cap dropped every attention file over 3 MB behind the replicas; a far larger one would hide a typo."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    app_cap_mb = config["server"]["maxUploadSize"]  # Streamlit refuses a larger body itself (MiB)
    assert app_cap_mb == max(MAX_UPLOAD_MB, MAX_ATTN_UPLOAD_MB), "the server's cap is the largest uploader's"
    proxy_cap = nginx_body_cap((ROOT / "deploy" / "attnlab.conf").read_text())
    assert proxy_cap == (app_cap_mb + FRAMING_MB) * 2**20, (
        f"deploy/attnlab.conf lets {proxy_cap / 2**20:g} MB through; the app accepts {app_cap_mb} MB files"
    )
