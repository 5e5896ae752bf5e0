"""One TLS context per process for the upstream clients' pools, following the environment's certificates."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from toolvet.upstream.direct import tls_context


def _authority(path: Path) -> Path:
    """A self-signed certificate authority, written as PEM to ``path``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "toolvet test authority")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def test_the_context_is_made_once_and_verifies_certificates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    ctx = tls_context()
    assert tls_context() is ctx
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname


def test_the_context_follows_ssl_cert_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    default = tls_context()
    monkeypatch.setenv("SSL_CERT_FILE", str(_authority(tmp_path / "authority.pem")))
    named = tls_context()
    assert named is not default and named is tls_context()
    assert [dict(entry[0] for entry in c["subject"]) for c in named.get_ca_certs()] == [
        {"commonName": "toolvet test authority"}]
    monkeypatch.delenv("SSL_CERT_FILE")
    assert tls_context() is default
