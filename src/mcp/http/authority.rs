//! What `/mcp` answers for the OAuth sign-in: the `401` challenge that sends a client to the
//! sign-in, and, after the handler, the `403 insufficient_scope` (a request beyond the
//! sign-in's scopes) or the `401` of a sign-in the forge has just refused.

use axum::http::{StatusCode, header};
use axum::response::Response;

use super::{Outcome, refusal};
use crate::forge::Token;
use crate::forge::scope::Scopes;
use crate::oauth::{Authority, Refused};

/// The answer to a request whose token was refused: `401` with a fresh challenge, or `503`
/// when the sign-in could not be checked.
pub(super) fn challenge_response(authority: &Authority, refused: &Refused) -> Response {
    if refused.is_unavailable() {
        // Its cause was logged where it happened (the store logs an outage once).
        tracing::debug!("a sign-in could not be checked: {refused}");
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("Service Unavailable: {refused}"),
            Some((header::RETRY_AFTER, header::HeaderValue::from_static("5"))),
        );
    }
    refusal(
        StatusCode::UNAUTHORIZED,
        format!("Unauthorized: {refused}"),
        Some((header::WWW_AUTHENTICATE, authority.challenge(refused))),
    )
}

/// Turns the handler's answer into the challenge its outcome calls for. The body (the
/// JSON-RPC answer, which says the same in words) is kept.
pub(super) async fn after(
    authority: &Authority,
    outcome: &Outcome,
    granted: Option<Scopes>,
    bearer: Option<&Token>,
    response: &mut Response,
) {
    match outcome {
        Outcome::Scope(needed) => {
            *response.status_mut() = StatusCode::FORBIDDEN;
            let challenge = authority.scope_challenge(granted.unwrap_or_default(), needed);
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        }
        Outcome::ForgeRefused => {
            if let Some(bearer) = bearer {
                authority.forge_refused(bearer.secret()).await;
            }
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            let refused = Refused::Forge("it refused the user's token".into());
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, authority.challenge(&refused));
        }
    }
}
