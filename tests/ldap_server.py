"""A real OpenLDAP directory for tests: Debian's slapd on free loopback ports, from a temporary
slapd.conf (mdb database in a temporary folder, suffix dc=example,dc=com, the core, cosine,
inetorgperson and nis schemas, the memberOf overlay), with TLS (ldaps:// and StartTLS) from a
throwaway authority, and a service account for the portal. Users (inetOrgPerson, salted SHA
passwords) and groups (groupOfNames) are added with ldap3 as the root DN.

The server is as permissive as real directories can be: it accepts a DN with an empty password
as an anonymous bind (``allow bind_anon_dn``), so refusing that is the portal's job.

    with LdapTestServer(tmp_path) as directory:
        directory.add_user("ivan", "s3cret", given="Иван", sn="Петров")
        directory.add_group("qa", ["ivan"])
        env = directory.settings()  # KB_LDAP_* for the portal

slapd and ldap-utils come from apt when missing (as ./kb test installs them); the tests skip
only where apt cannot install them.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from ldap3 import MODIFY_REPLACE, Connection, Server

from tests.conftest import free_port

SLAPD = Path("/usr/sbin/slapd")
SCHEMA = Path("/etc/ldap/schema")
SUFFIX = "dc=example,dc=com"
PEOPLE = f"ou=people,{SUFFIX}"
GROUPS = f"ou=groups,{SUFFIX}"

CONFIG = """\
include {schema}/core.schema
include {schema}/cosine.schema
include {schema}/inetorgperson.schema
include {schema}/nis.schema
pidfile {folder}/slapd.pid
argsfile {folder}/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
TLSCACertificateFile {folder}/ca.pem
TLSCertificateFile {folder}/server.pem
TLSCertificateKeyFile {folder}/server.key
allow bind_anon_dn
database mdb
maxsize 16777216
suffix "{suffix}"
rootdn "{root_dn}"
rootpw {root_password}
directory {folder}/data
overlay memberof
access to attrs=userPassword by anonymous auth by self write by * none
access to * by * read
"""


def ensure_slapd() -> None:
    """slapd and ldap-utils on this machine: installed with apt when missing (without letting
    the package configure a directory of its own); the test skips only when apt cannot run."""
    if SLAPD.exists() and shutil.which("ldapwhoami"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip(
            "slapd (OpenLDAP) is not installed and apt-get cannot install it here (not root or no "
            "apt): install the slapd and ldap-utils packages to run the LDAP tests"
        )
    subprocess.run(
        ["debconf-set-selections"], input=b"slapd slapd/no_configuration boolean true\n", check=True
    )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [
        "apt-get",
        "install",
        "-y",
        "-q",
        "-o",
        "DPkg::Lock::Timeout=300",
        "slapd",
        "ldap-utils",
    ]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
        done = subprocess.run(install, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"apt-get could not install slapd: {done.stderr[-2000:]}")


def ssha(password: str) -> str:
    """A salted SHA-1 userPassword, as slappasswd writes it."""
    salt = secrets.token_bytes(8)
    digest = hashlib.sha1(password.encode() + salt).digest()
    return "{SSHA}" + base64.b64encode(digest + salt).decode()


def _certificates(folder: Path) -> None:
    """A throwaway authority and a server certificate for localhost and 127.0.0.1."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test directory CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "server.pem").write_bytes(server.public_bytes(pem))
    (folder / "server.key").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )


class LdapTestServer:
    root_dn = f"cn=admin,{SUFFIX}"
    root_password = "root-" + secrets.token_hex(8)
    service_dn = f"cn=portal,ou=services,{SUFFIX}"
    service_password = "service-" + secrets.token_hex(8)

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port, self.tls_port = free_port(), free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"ldap://127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> str:
        return str(self.folder / "ca.pem")

    def settings(self, **extra: str) -> dict[str, str]:
        """The portal's environment for this directory (groups searched under ou=groups)."""
        return {
            "KB_LDAP_URL": self.url,
            "KB_LDAP_BIND_DN": self.service_dn,
            "KB_LDAP_BIND_PASSWORD": self.service_password,
            "KB_LDAP_USER_BASE": PEOPLE,
            "KB_LDAP_GROUP_BASE": GROUPS,
            "KB_LDAP_TIMEOUT": "5",
            **extra,
        }

    # --- the directory's contents -----------------------------------------------------------

    def admin(self) -> Connection:
        return Connection(
            Server(self.url),
            self.root_dn,
            self.root_password,
            auto_bind=True,
            raise_exceptions=True,
        )

    def add_user(self, uid: str, password: str, *, given: str = "", sn: str = "") -> str:
        dn = f"uid={uid},{PEOPLE}"
        attributes = {
            "uid": uid,
            "cn": f"{given} {sn}".strip() or uid,
            "sn": sn or uid,
            "mail": f"{uid}@example.com",
            "userPassword": ssha(password),
        }
        if given:
            attributes["givenName"] = given
        with self.admin() as admin:
            admin.add(dn, ["inetOrgPerson"], attributes)
        return dn

    def add_group(self, cn: str, members: list[str]) -> str:
        dn = f"cn={cn},{GROUPS}"
        with self.admin() as admin:
            admin.add(dn, ["groupOfNames"], {"cn": cn, "member": self._dns(members)})
        return dn

    def set_members(self, cn: str, members: list[str]) -> None:
        with self.admin() as admin:
            admin.modify(f"cn={cn},{GROUPS}", {"member": [(MODIFY_REPLACE, self._dns(members))]})

    def entry_uuid(self, uid: str) -> str:
        with self.admin() as admin:
            admin.search(f"uid={uid},{PEOPLE}", "(objectClass=*)", "BASE", attributes=["entryUUID"])
            return str(admin.entries[0].entryUUID)

    def _dns(self, uids: list[str]) -> list[str]:
        # groupOfNames must have a member: an empty group keeps the service account.
        return [f"uid={uid},{PEOPLE}" for uid in uids] or [self.service_dn]

    def _load_base(self) -> None:
        with self.admin() as admin:
            admin.add(SUFFIX, ["dcObject", "organization"], {"dc": "example", "o": "Example"})
            for unit in ("people", "groups", "services"):
                admin.add(f"ou={unit},{SUFFIX}", ["organizationalUnit"], {"ou": unit})
            admin.add(
                self.service_dn,
                ["organizationalRole", "simpleSecurityObject"],
                {"cn": "portal", "userPassword": ssha(self.service_password)},
            )

    # --- running ----------------------------------------------------------------------------

    def start(self) -> None:
        listen = f"ldap://127.0.0.1:{self.port}/ ldaps://127.0.0.1:{self.tls_port}/"
        log = open(self.folder / "slapd.log", "ab")  # noqa: SIM115 - slapd keeps it
        self.process = subprocess.Popen(
            [str(SLAPD), "-f", str(self.folder / "slapd.conf"), "-h", listen, "-d", "0"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"slapd exited: {(self.folder / 'slapd.log').read_text()[-2000:]}"
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("slapd did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> LdapTestServer:
        (self.folder / "data").mkdir(parents=True, exist_ok=True)
        _certificates(self.folder)
        (self.folder / "slapd.conf").write_text(
            CONFIG.format(
                schema=SCHEMA,
                folder=self.folder,
                suffix=SUFFIX,
                root_dn=self.root_dn,
                root_password=self.root_password,
            )
        )
        self.start()
        try:
            self._load_base()
        except Exception:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture
def directory(tmp_path) -> Iterator[LdapTestServer]:
    """A running directory of its own for one test."""
    ensure_slapd()
    with LdapTestServer(tmp_path / "slapd") as server:
        yield server
