//! Who stands behind a key or a session: the person an identity provider
//! signed in, and the rule by which two callers are the same person.

use serde::{Deserialize, Serialize};

/// A person as their organisation's identity provider (OpenID Connect)
/// names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    /// The provider's issuer URL (the ID token's `iss`).
    pub issuer: String,
    /// The provider's stable id of the person (the ID token's `sub`).
    pub subject: String,
    /// Their name, as the provider gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Their e-mail address, as the provider gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

impl Person {
    /// What tells the person apart: subject and issuer (a name or an
    /// e-mail address may change; these do not).
    pub fn id(&self) -> String {
        format!("{} at {}", self.subject, self.issuer)
    }

    /// What people read: the name, else the e-mail address, else the subject.
    pub fn label(&self) -> &str {
        self.name
            .as_deref()
            .or(self.email.as_deref())
            .unwrap_or(&self.subject)
    }
}

/// An API key or a signed-in session, and the person or team it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRef {
    /// The key's public id (a session's: `ses_…`).
    pub key_id: String,
    /// Its owner (`keys add --owner`), when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The signed-in person behind a session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
}

impl KeyRef {
    /// A key with no owner or person.
    pub fn key(key_id: impl Into<String>) -> KeyRef {
        KeyRef {
            key_id: key_id.into(),
            owner: None,
            person: None,
        }
    }

    /// Who is behind it, as people read it: the person, else the owner,
    /// else the key itself.
    pub fn person(&self) -> &str {
        match (&self.person, &self.owner) {
            (Some(person), _) => person.label(),
            (None, Some(owner)) => owner,
            (None, None) => &self.key_id,
        }
    }

    /// Every name that identifies the person behind it: the person's id and
    /// e-mail address, the owner, else the key id. Compared without case.
    fn identities(&self) -> Vec<String> {
        let mut names = Vec::with_capacity(3);
        if let Some(person) = &self.person {
            names.push(person.id());
            names.extend(person.email.clone());
        }
        names.extend(self.owner.clone());
        if names.is_empty() {
            names.push(self.key_id.clone());
        }
        names.iter().map(|n| n.trim().to_lowercase()).collect()
    }

    /// Whether `other` may be the same person: any name in common. Erring
    /// towards "the same" only refuses more (a second vote, a self-approval),
    /// never lets one person count twice.
    pub fn is_same_person(&self, other: &KeyRef) -> bool {
        let mine = self.identities();
        other.identities().iter().any(|name| mine.contains(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Person {
        Person {
            issuer: "https://idp.example".into(),
            subject: "u-1".into(),
            name: Some("Alice".into()),
            email: Some("Alice@Example.com".into()),
        }
    }

    fn signed_in(key_id: &str, person: Person) -> KeyRef {
        KeyRef {
            person: Some(person),
            ..KeyRef::key(key_id)
        }
    }

    #[test]
    fn two_sessions_of_one_person_are_one_person() {
        let session = signed_in("ses_1", alice());
        let other = signed_in("ses_2", alice());
        assert!(session.is_same_person(&other));
        assert_eq!(session.person(), "Alice");
    }

    #[test]
    fn a_key_owned_by_the_persons_email_is_the_same_person() {
        let owned = KeyRef {
            owner: Some("alice@example.com".into()),
            ..KeyRef::key("key_3")
        };
        assert!(signed_in("ses_1", alice()).is_same_person(&owned));
    }

    #[test]
    fn the_same_subject_at_another_issuer_is_another_person() {
        let other = Person {
            issuer: "https://other.example".into(),
            email: None,
            ..alice()
        };
        let alice_no_mail = Person {
            email: None,
            ..alice()
        };
        assert!(!signed_in("ses_1", alice_no_mail).is_same_person(&signed_in("ses_2", other)));
    }

    #[test]
    fn keys_without_owner_are_told_apart_by_id() {
        assert!(!KeyRef::key("key_1").is_same_person(&KeyRef::key("key_2")));
        assert!(KeyRef::key("key_1").is_same_person(&KeyRef::key("key_1")));
    }
}
