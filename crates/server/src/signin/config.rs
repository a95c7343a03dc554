//! `serve --sign-in FILE`: the identity providers reviewers sign in with,
//! read strictly like the policy. An unknown key, a bad URL, an unreadable
//! secret or a provider whose groups map to no role refuses to start.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use url::Url;

/// The longest a person's groups are trusted before the provider is asked
/// again: the bound on how long a removed member can still decide.
pub const MAX_REVALIDATE_SECONDS: u32 = 300;

/// The sign-in file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// How long a session lasts from sign-in, in hours.
    #[serde(default = "default_session_hours")]
    session_hours: u32,
    /// How old the provider's word on a person's groups may be before a
    /// request acts on it, in seconds (at most [`MAX_REVALIDATE_SECONDS`]).
    #[serde(default = "default_revalidate")]
    revalidate_after_seconds: u32,
    /// Whether reviewer API keys still work once sign-in is on.
    #[serde(default = "yes")]
    reviewer_keys: bool,
    #[serde(default, rename = "provider")]
    providers: Vec<ProviderFile>,
}

fn default_session_hours() -> u32 {
    12
}

fn default_revalidate() -> u32 {
    MAX_REVALIDATE_SECONDS
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderFile {
    id: String,
    name: Option<String>,
    issuer: String,
    client_id: String,
    client_secret_file: Option<PathBuf>,
    client_secret_env: Option<String>,
    redirect_url: String,
    #[serde(default = "default_scopes")]
    scopes: Vec<String>,
    #[serde(default = "default_groups_claim")]
    groups_claim: String,
    #[serde(default)]
    roles: BTreeMap<String, Vec<String>>,
}

fn default_scopes() -> Vec<String> {
    ["openid", "profile", "email"].map(String::from).to_vec()
}

fn default_groups_claim() -> String {
    "groups".into()
}

/// Sign-in as configured and checked.
#[derive(Debug, Clone)]
pub struct SignInConfig {
    /// How long a session lasts from sign-in.
    pub session_length: chrono::Duration,
    /// How old a person's validation may be before it is checked again.
    pub revalidate_after: chrono::Duration,
    /// Whether reviewer keys are still accepted.
    pub reviewer_keys: bool,
    /// The desk's origin (`https://review.example.com`): the one origin
    /// state-changing requests with a session may come from.
    pub origin: String,
    /// The providers, in the file's order.
    pub providers: Vec<ProviderConfig>,
}

/// One identity provider.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Its id in the sign-in URL (`/auth/login?provider=ID`).
    pub id: String,
    /// What the sign-in button says.
    pub name: String,
    /// Its issuer URL, as its ID tokens' `iss` says it.
    pub issuer: String,
    /// This server's client id there.
    pub client_id: String,
    /// The client secret, for confidential clients.
    pub client_secret: Option<String>,
    /// Where the provider sends the browser back (`…/auth/callback`).
    pub redirect_url: Url,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// The claim that carries the person's groups.
    pub groups_claim: String,
    /// Each group's roles.
    pub roles: BTreeMap<String, Vec<String>>,
}

impl ProviderConfig {
    /// The roles a person with these groups may review as, each once.
    pub fn roles_of(&self, groups: &[String]) -> Vec<String> {
        let mut roles: Vec<String> = groups
            .iter()
            .filter_map(|g| self.roles.get(g))
            .flatten()
            .cloned()
            .collect();
        roles.sort();
        roles.dedup();
        roles
    }
}

/// Reads and checks the sign-in file at `path`.
pub fn load(path: &Path) -> Result<SignInConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("sign-in file {}: cannot be read: {e}", path.display()))?;
    parse(&path.display().to_string(), &text, &|var| {
        std::env::var(var).ok()
    })
}

/// The sign-in configuration written in `text` (read from `name`); `env`
/// reads environment variables.
pub fn parse(
    name: &str,
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<SignInConfig, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |span| {
            1 + text.as_bytes()[..span.start.min(text.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
        });
        format!("{name}:{line}: {}", e.message().trim())
    })?;
    let mut problems = Vec::new();
    if file.providers.is_empty() {
        problems.push("no `[[provider]]`: name at least one identity provider".to_owned());
    }
    if !(1..=MAX_REVALIDATE_SECONDS).contains(&file.revalidate_after_seconds) {
        problems.push(format!(
            "revalidate_after_seconds = {}: it must be 1 to {MAX_REVALIDATE_SECONDS} (5 minutes)",
            file.revalidate_after_seconds
        ));
    }
    if file.session_hours == 0 {
        problems.push("session_hours = 0: a session must last at least an hour".into());
    }
    let mut providers = Vec::new();
    for p in file.providers {
        match provider(p, env) {
            Ok(p) if providers.iter().any(|q: &ProviderConfig| q.id == p.id) => {
                problems.push(format!("provider `{}` is named twice", p.id));
            }
            Ok(p) => providers.push(p),
            Err(e) => problems.push(e),
        }
    }
    let origins: Vec<String> = providers
        .iter()
        .map(|p| p.redirect_url.origin().ascii_serialization())
        .collect();
    if origins.iter().any(|o| Some(o) != origins.first()) {
        problems.push(format!(
            "the providers' redirect_url name different origins ({}): the desk has one",
            origins.join(", ")
        ));
    }
    if !problems.is_empty() {
        return Err(problems
            .iter()
            .map(|p| format!("{name}: {p}"))
            .collect::<Vec<_>>()
            .join("\n"));
    }
    Ok(SignInConfig {
        session_length: chrono::Duration::hours(file.session_hours.into()),
        revalidate_after: chrono::Duration::seconds(file.revalidate_after_seconds.into()),
        reviewer_keys: file.reviewer_keys,
        origin: origins.into_iter().next().unwrap_or_default(),
        providers,
    })
}

fn provider(
    p: ProviderFile,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderConfig, String> {
    let at = |problem: String| format!("provider `{}`: {problem}", p.id);
    if p.id.is_empty() || !p.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(at("id: use letters, digits and `-`".into()));
    }
    let issuer = Url::parse(&p.issuer).map_err(|e| at(format!("issuer `{}`: {e}", p.issuer)))?;
    let redirect_url = Url::parse(&p.redirect_url)
        .map_err(|e| at(format!("redirect_url `{}`: {e}", p.redirect_url)))?;
    for (field, url) in [("issuer", &issuer), ("redirect_url", &redirect_url)] {
        if url.scheme() != "https" && !is_loopback(url) {
            return Err(at(format!(
                "{field} `{url}` is not https: only a loopback address (for development) may use http"
            )));
        }
    }
    if redirect_url.path() != "/auth/callback" {
        return Err(at(format!(
            "redirect_url `{redirect_url}` must end in /auth/callback, where this server takes the provider's answer"
        )));
    }
    let client_secret = match (&p.client_secret_file, &p.client_secret_env) {
        (Some(_), Some(_)) => {
            return Err(at(
                "client_secret_file and client_secret_env: give one".into()
            ))
        }
        (Some(file), None) => Some(
            std::fs::read_to_string(file)
                .map_err(|e| at(format!("client_secret_file {}: {e}", file.display())))?
                .trim()
                .to_owned(),
        ),
        (None, Some(var)) => Some(env(var).filter(|s| !s.trim().is_empty()).ok_or_else(|| {
            at(format!(
                "client_secret_env: the environment variable {var} is not set"
            ))
        })?),
        (None, None) => None,
    };
    if !p.scopes.iter().any(|s| s == "openid") {
        return Err(at("scopes: `openid` is needed to sign in".into()));
    }
    if p.roles.is_empty() || p.roles.values().all(Vec::is_empty) {
        return Err(at(format!(
            "[provider.roles] maps no group to a role: nobody could review (e.g. \"reviewers\" = [\"reviewer\"] under the `{}` claim)",
            p.groups_claim
        )));
    }
    Ok(ProviderConfig {
        name: p.name.clone().unwrap_or_else(|| p.id.clone()),
        issuer: p.issuer.trim_end_matches('/').to_owned(),
        client_id: p.client_id,
        client_secret,
        redirect_url,
        scopes: p.scopes,
        groups_claim: p.groups_claim,
        roles: p.roles,
        id: p.id,
    })
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[provider]]
id = "corp"
issuer = "https://idp.example.com/realms/corp"
client_id = "countersign"
client_secret_env = "SECRET"
redirect_url = "https://review.example.com/auth/callback"
[provider.roles]
"countersign-reviewers" = ["reviewer"]
"security" = ["reviewer", "security_officer"]
"#;

    fn env(var: &str) -> Option<String> {
        (var == "SECRET").then(|| "s3cret".to_owned())
    }

    #[test]
    fn a_provider_maps_groups_to_roles() {
        let config = parse("s.toml", GOOD, &env).unwrap();
        assert_eq!(config.origin, "https://review.example.com");
        assert_eq!(config.revalidate_after, chrono::Duration::minutes(5));
        let corp = &config.providers[0];
        assert_eq!(corp.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(
            corp.roles_of(&[
                "security".into(),
                "countersign-reviewers".into(),
                "x".into()
            ]),
            ["reviewer", "security_officer"]
        );
        assert!(corp.roles_of(&["x".into()]).is_empty());
    }

    #[test]
    fn the_example_in_the_operators_guide_is_a_valid_file() {
        let page = include_str!("../../../../docs/sign-in.md");
        let example = page
            .split("```toml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("docs/sign-in.md has a toml example");
        let env = |var: &str| (var == "COUNTERSIGN_OIDC_SECRET").then(|| "s".to_owned());
        let config = parse("docs/sign-in.md", example, &env).unwrap();
        assert_eq!(config.origin, "https://review.example.com");
        assert_eq!(
            config.providers[0].roles_of(&["security-team".into()]),
            ["reviewer", "security_officer"]
        );
    }

    #[test]
    fn mistakes_refuse_to_start_naming_the_line_or_provider() {
        let typo = GOOD.replace("client_id", "clientid");
        let err = parse("s.toml", &typo, &env).unwrap_err();
        assert!(
            err.starts_with("s.toml:5: unknown field `clientid`"),
            "{err}"
        );
        let err = parse("s.toml", GOOD, &|_| None).unwrap_err();
        assert!(
            err.contains(
                "provider `corp`: client_secret_env: the environment variable SECRET is not set"
            ),
            "{err}"
        );
        let http = GOOD.replace("https://idp.example.com", "http://idp.example.com");
        let err = parse("s.toml", &http, &env).unwrap_err();
        assert!(err.contains("is not https"), "{err}");
        let slow = format!("revalidate_after_seconds = 301\n{GOOD}");
        let err = parse("s.toml", &slow, &env).unwrap_err();
        assert!(err.contains("it must be 1 to 300 (5 minutes)"), "{err}");
        let no_roles = GOOD
            .replace("\"security\" = [\"reviewer\", \"security_officer\"]", "")
            .replace("\"countersign-reviewers\" = [\"reviewer\"]", "");
        let err = parse("s.toml", &no_roles, &env).unwrap_err();
        assert!(err.contains("maps no group to a role"), "{err}");
    }
}
