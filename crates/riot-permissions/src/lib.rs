//! # riot-permissions — deciding allow / ask / deny
//!
//! Will hold the decision chain, rule matching, modes, bash analysis and
//! safety checks of ARCHITECTURE §9. The shared types (modes, rules,
//! `DecisionReason`) live in `riot_protocol::permission`.
//!
//! Empty until the permissions issue lands.
