//! `riot sandbox check [--json]`: what the OS sandbox enforces for this
//! project, found by running a command under it (docs/sandbox.md).

use riot_kernel::Kernel;
use riot_kernel::sandbox::SessionSandbox;
use riot_protocol::SandboxMechanism;
use serde_json::json;

use crate::cli::SharedOptions;
use crate::cli::flag_layer;
use crate::out::{errln, outln};
use crate::world;

/// The sandbox a session in the chosen project would get.
pub async fn session_sandbox(shared: &SharedOptions) -> Result<SessionSandbox, (String, i32)> {
    let env = world::environment();
    let home = world::riot_home(&env).map_err(|e| (e.to_string(), e.exit_code()))?;
    let kernel = Kernel::new(world::capabilities(), home);
    let cwd =
        world::project_dir(shared.cwd.as_ref()).map_err(|e| (e.to_string(), e.exit_code()))?;
    let loaded = kernel
        .load_config(&cwd, &env, &flag_layer(shared), shared.trust_project)
        .await
        .map_err(|e| (e.to_string(), e.exit_code()))?;
    Ok(kernel.session_sandbox(&loaded.config, &cwd, &env))
}

/// The JSON `riot sandbox check --json` prints (and `config show --json`
/// carries as `sandbox_status`).
pub fn status_json(sandbox: &SessionSandbox) -> serde_json::Value {
    let status = &sandbox.status;
    let existing = |paths: &[std::path::PathBuf]| -> Vec<String> {
        paths
            .iter()
            .filter(|p| p.symlink_metadata().is_ok())
            .map(|p| p.display().to_string())
            .collect()
    };
    // Landlock alone can only grant: a protected path below a writable
    // one stays writable, and nothing can be hidden.
    let landlock_only = status.mechanism == SandboxMechanism::LandlockSeccomp;
    let read_only: Vec<std::path::PathBuf> = sandbox
        .policy
        .read_only
        .iter()
        .filter(|p| !landlock_only || !status.writable.iter().any(|w| p.starts_with(w)))
        .cloned()
        .collect();
    let enforced = status.enforced;
    let mut value = json!({
        "enforced": sandbox.enforced(),
        "mechanism": status.mechanism.as_str(),
        "network": status.network,
        "writable": status.writable,
        "read_only": if enforced { existing(&read_only) } else { Vec::new() },
        "hidden": if enforced && !landlock_only { existing(&sandbox.policy.hidden) } else { Vec::new() },
        "auto_allow": sandbox.allows_unasked(),
    });
    if let Some(reason) = &status.reason {
        value["reason"] = json!(reason);
    }
    if !status.limits.is_empty() {
        value["limits"] = json!(status.limits);
    }
    value
}

/// `riot sandbox check [--json]`: exit 0 when enforced, 1 when not.
pub async fn check(shared: &SharedOptions, json_out: bool) -> i32 {
    let sandbox = match session_sandbox(shared).await {
        Ok(s) => s,
        Err((message, code)) => {
            errln!("riot sandbox check: {message}");
            return code;
        }
    };
    let code = if sandbox.enforced() { 0 } else { 1 };
    if json_out {
        outln!("{}", status_json(&sandbox));
        return code;
    }
    let status = &sandbox.status;
    if sandbox.enforced() {
        outln!("enforced: yes, by {}", status.mechanism.as_str());
        outln!(
            "network: {}",
            if status.network { "allowed" } else { "off" }
        );
        for path in &status.writable {
            outln!("writable: {}", path.display());
        }
        outln!("writable: a private temporary directory ($TMPDIR)");
        if let Some(json) = status_json(&sandbox)["read_only"].as_array() {
            for path in json.iter().filter_map(|p| p.as_str()) {
                outln!("read-only: {path}");
            }
        }
        outln!(
            "auto-allow: {}",
            if sandbox.allows_unasked() {
                "on (commands that raise no safety finding run without a question; `.git` is read-only to them)".to_owned()
            } else if let Some(why) = sandbox.unasked_off() {
                format!("off ({why})")
            } else {
                "off (sandbox.auto_allow is false)".to_owned()
            }
        );
        if let Some(reason) = &status.reason {
            outln!("note: {reason}");
        }
        for limit in &status.limits {
            outln!("limit: {limit}");
        }
    } else {
        outln!(
            "enforced: no — {}",
            status.reason.as_deref().unwrap_or("no reason was given")
        );
        outln!("Commands run unsandboxed and are asked about as without a sandbox.");
    }
    code
}
