"""Who is asking: a verified JWT (or a static API key) becomes a :class:`~ragbench.schema.Principal`.

The principal comes only from the token's claims (``sub``, ``roles``, ``departments``, ``clearance``, ``exp`` are all
required), never from a request body. HS256 tokens are checked with the secret from ``RAGBENCH_JWT_SECRET``;
RS256 / ES256 tokens with the PEM public key of ``serve.jwt_public_key``. Each algorithm is checked only with its
own key, so a public key can never be used as an HMAC secret, and ``alg: none`` is never accepted. Issuer and
audience are checked when configured. Agents may instead send ``X-API-Key`` with a key listed in the
``serve.api_keys`` YAML file (plain or ``sha256:<hex>``), mapped to fixed claims.
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from ..config_tools import read_yaml_mapping
from ..errors import ConfigError, SchemaError
from ..schema import Classification, Principal

REQUIRED_CLAIMS = ("sub", "roles", "departments", "clearance", "exp")
ASYMMETRIC = ("RS256", "ES256")
CLEARANCES = ("Public", "Internal", "Confidential", "Restricted")


class AuthError(Exception):
    """The request is not authenticated (→ 401); ``detail`` says why without echoing the token."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def principal_from_claims(claims: Mapping[str, Any]) -> Principal:
    """The principal of verified claims; wrong shapes raise :class:`AuthError` naming the claim."""
    missing = [c for c in REQUIRED_CLAIMS if c != "exp" and c not in claims]
    if missing:
        raise AuthError(f"token lacks the required claim(s) {missing}.")
    sub = claims["sub"]
    if not isinstance(sub, str) or not sub.strip():
        raise AuthError("claim sub must be a non-empty string.")
    for name in ("roles", "departments"):
        value = claims[name]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise AuthError(f"claim {name} must be a list of strings.")
    clearance = claims["clearance"]
    if not isinstance(clearance, str) or clearance.strip().title() not in CLEARANCES:
        raise AuthError(f"claim clearance must be one of {', '.join(CLEARANCES)}.")
    try:
        return Principal.make(sub, claims["roles"], claims["departments"], Classification.parse(clearance))
    except SchemaError as exc:
        raise AuthError(f"claims do not describe a principal: {exc}") from None


@dataclass(frozen=True)
class ApiKey:
    digest: str  # sha256 hex of the key
    principal: Principal


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def load_api_keys(path: str | Path) -> list[ApiKey]:
    """``{api_keys: {KEY or sha256:HEX: {sub, roles, departments, clearance}}}`` (the top key is optional)."""
    p = Path(path)
    data: Any = read_yaml_mapping(p, "API keys")  # missing, binary, non-UTF-8 or invalid YAML: a ConfigError
    if "api_keys" in data:
        data = data["api_keys"]
    if not isinstance(data, Mapping):
        raise ConfigError(f"API keys file {p}: expected a mapping of key → claims.")
    keys = []
    for key, claims in data.items():
        if not isinstance(claims, Mapping):
            raise ConfigError(f"API keys file {p}: the entry of a key must be a mapping of claims (sub, roles, "
                              "departments, clearance).")
        try:
            principal = principal_from_claims(claims)
        except AuthError as exc:
            raise ConfigError(f"API keys file {p}, entry {claims.get('sub')!r}: {exc.detail}") from None
        text = str(key)
        digest = text.removeprefix("sha256:").lower() if text.startswith("sha256:") else _digest(text)
        if len(digest) != 64:
            raise ConfigError(f"API keys file {p}: sha256 digests have 64 hex digits (entry {principal.user_id!r}).")
        keys.append(ApiKey(digest, principal))
    return keys


class Authenticator:
    """Verifies bearer tokens and API keys."""

    def __init__(self, secret: str | None = None, public_key: str | None = None, issuer: str | None = None,
                 audience: str | None = None, api_keys: list[ApiKey] | None = None, leeway: int = 0) -> None:
        if not secret and not public_key and not api_keys:
            raise ConfigError("no way to authenticate: set RAGBENCH_JWT_SECRET (HS256), give --jwt-public-key "
                              "(RS256/ES256) or an API keys file.")
        if secret is not None and len(secret.encode("utf-8")) < 32:
            raise ConfigError("RAGBENCH_JWT_SECRET is shorter than 32 bytes. Fix: use a longer random secret, e.g. "
                              "`python -c 'import secrets; print(secrets.token_urlsafe(48))'`.")
        self.secret = secret
        self.public_key = public_key
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self._keys = {k.digest: k.principal for k in api_keys or ()}

    @classmethod
    def from_files(cls, secret: str | None, public_key_path: str | None, issuer: str | None, audience: str | None,
                   api_keys_path: str | None, leeway: int = 0) -> Authenticator:
        public_key = None
        if public_key_path:
            p = Path(public_key_path)
            if not p.is_file():
                raise ConfigError(f"JWT public key {p} does not exist. Fix: give a PEM file to --jwt-public-key.")
            public_key = p.read_text(encoding="utf-8")
        keys = load_api_keys(api_keys_path) if api_keys_path else None
        return cls(secret or None, public_key, issuer, audience, keys, leeway)

    def _key_for(self, alg: str) -> Any:
        if alg == "HS256" and self.secret:
            return self.secret
        if alg in ASYMMETRIC and self.public_key:
            return self.public_key
        accepted = (["HS256"] if self.secret else []) + (list(ASYMMETRIC) if self.public_key else [])
        raise AuthError(f"token algorithm {alg!r} is not accepted; this server accepts {accepted or 'no tokens'}.")

    def verify_token(self, token: str) -> Principal:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise AuthError("malformed bearer token.") from None
        alg = str(header.get("alg", ""))
        key = self._key_for(alg)
        options: Any = {"require": list(REQUIRED_CLAIMS) + (["iss"] if self.issuer else []) + (["aud"] if self.audience
                                                                                          else [])}
        try:
            claims = jwt.decode(token, key, algorithms=[alg], issuer=self.issuer, audience=self.audience,
                                leeway=self.leeway, options=options)
        except jwt.ExpiredSignatureError:
            raise AuthError("token has expired.") from None
        except jwt.InvalidSignatureError:
            raise AuthError("token signature is invalid.") from None
        except jwt.MissingRequiredClaimError as exc:
            raise AuthError(f"token lacks the required claim {exc.claim!r}.") from None
        except jwt.InvalidIssuerError:
            raise AuthError("token issuer is not accepted.") from None
        except jwt.InvalidAudienceError:
            raise AuthError("token audience is not accepted.") from None
        except jwt.PyJWTError as exc:
            raise AuthError(f"token rejected ({type(exc).__name__}).") from None
        return principal_from_claims(claims)

    def verify_api_key(self, key: str) -> Principal:
        digest = _digest(key)
        for known, principal in self._keys.items():
            if hmac.compare_digest(known, digest):
                return principal
        raise AuthError("unknown API key.")

    def authenticate(self, authorization: str | None, api_key: str | None) -> Principal:
        """The principal of ``Authorization: Bearer …`` or ``X-API-Key``; anything else raises AuthError."""
        if authorization:
            scheme, _, token = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise AuthError("expected `Authorization: Bearer <token>`.")
            return self.verify_token(token.strip())
        if api_key:
            if not self._keys:
                raise AuthError("API keys are not enabled on this server.")
            return self.verify_api_key(api_key.strip())
        raise AuthError("missing credentials: send `Authorization: Bearer <JWT>` or `X-API-Key`.")
