//! The `riot` binary. Parses the command line of docs/interfaces.md and hands
//! each command to the kernel; bare `riot` opens the terminal UI.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line face
#![allow(clippy::disallowed_methods)] // a face: reads the real environment and current directory

mod acp;
mod cli;
mod exec;
mod inspect;
mod logs;
mod mcp_cmd;
mod opening;
mod out;
mod rewind_cmd;
mod sandbox_cmd;
mod serve;
mod tools_cmd;
mod tui;
mod worktree_cmd;
mod world;

use std::process::ExitCode;

use cli::{
    Cli, Command, ConfigCommand, ExecArgs, McpCommand, PermissionsCommand, SessionsCommand,
    ToolsCommand, WorktreeCommand,
};

/// The ACP SDK's transport logs whole JSON-RPC messages at `trace`, and a
/// message may carry an API key (`_riot/config_set`): never below `debug`,
/// whatever `RIOT_LOG` asks.
const NEVER_TRACED: &str = "agent_client_protocol::jsonrpc::transport_actor=debug";

/// Logs go to `<riot home>/logs/riot.log` (stdout and stderr belong to the
/// person and to scripts); `RIOT_LOG` sets the filter, default `info`.
fn init_logging() {
    let filter = std::env::var("RIOT_LOG").unwrap_or_else(|_| "info".to_owned());
    let env = world::environment();
    let Ok(home) = world::riot_home(&env) else {
        return;
    };
    let Ok(file) = logs::RotatingFile::open(&home.join("logs"), logs::MAX_FILE_BYTES) else {
        return;
    };
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(move || file.clone())
        .with_ansi(false)
        .with_target(true)
        .with_filter(log_filter(&filter))
        .with_filter(tracing_subscriber::filter::filter_fn(|m| {
            !describes_handler_chain(m)
        }));
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// The ACP SDK's trace of which handler took a message: it describes the
/// whole chain of handlers, escaping each level's description inside the
/// next, so the line doubles with every handler an agent registers
/// (megabytes each, rotating the log away). Never logged.
fn describes_handler_chain(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.target() == "agent_client_protocol::jsonrpc::incoming_actor"
        && metadata.fields().field("handler").is_some()
}

/// `RIOT_LOG`'s filter with [`NEVER_TRACED`] added last, so it wins.
fn log_filter(spec: &str) -> tracing_subscriber::EnvFilter {
    let filter = tracing_subscriber::EnvFilter::new(spec);
    match NEVER_TRACED.parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    }
}

fn usage(message: &str) -> i32 {
    eprintln!("riot: {message}");
    riot_kernel::error::EXIT_USAGE
}

fn main() -> ExitCode {
    // `riot __sandbox-exec …`: the OS sandbox's helper in front of a
    // sandboxed command (riot-runtime's sandbox/helper.rs). It replaces
    // itself with the command; nothing else of Riot starts.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == riot_runtime::sandbox::helper::SUBCOMMAND)
    {
        let code = riot_runtime::sandbox::helper::exec_main(&args[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let cli = Cli::parse_args();
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("riot: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async {
        // Bare `riot` (the terminal UI) takes --continue and --resume too.
        let print_only = match (&cli.command, cli.print) {
            (None, false) => tui::print_only(&cli.print_options),
            _ => cli.print_options.clone(),
        };
        if !cli.print
            && let Some(message) = exec::print_options_without_print(&print_only)
        {
            return usage(message);
        }
        match &cli.command {
            // `riot -p`: Claude Code's print mode is `riot exec`.
            None if cli.print => {
                let args = ExecArgs {
                    prompt: cli.prompt.clone(),
                    options: cli.print_options.clone(),
                };
                exec::run(&cli.shared, &args).await
            }
            None => tui::run(&cli.shared, &cli.print_options, cli.prompt.clone()).await,
            Some(_) if cli.print => {
                usage("-p runs a task as `riot exec` does; drop -p, or the subcommand")
            }
            Some(Command::Exec(args)) => exec::run(&cli.shared, args).await,
            Some(Command::Acp(_)) => acp::run(&cli.shared).await,
            Some(Command::Serve(args)) => serve::run(&cli.shared, args).await,
            Some(Command::Sessions(SessionsCommand::List { json })) => {
                inspect::sessions_list(*json)
            }
            Some(Command::Sessions(SessionsCommand::Show { id, json })) => {
                inspect::sessions_show(id, *json)
            }
            Some(Command::Sessions(SessionsCommand::Delete { id })) => inspect::sessions_delete(id),
            Some(Command::Sessions(SessionsCommand::Checkpoints { id, json })) => {
                rewind_cmd::checkpoints(id, *json).await
            }
            Some(Command::Sessions(SessionsCommand::Rewind {
                id,
                to,
                files_only,
                conversation_only,
                force,
                undo,
                json,
            })) => {
                rewind_cmd::rewind(
                    id,
                    *to,
                    *files_only,
                    *conversation_only,
                    *force,
                    *undo,
                    *json,
                )
                .await
            }
            Some(Command::Tools(ToolsCommand::List { json })) => {
                tools_cmd::list(&cli.shared, *json).await
            }
            Some(Command::Tools(ToolsCommand::Call {
                name,
                input,
                yes,
                session,
            })) => tools_cmd::call(&cli.shared, name, input, *yes, session.as_deref()).await,
            Some(Command::Mcp(McpCommand::List { json })) => {
                mcp_cmd::list(&cli.shared, *json).await
            }
            Some(Command::Mcp(McpCommand::Add {
                transport,
                env,
                headers,
                name,
                target,
            })) => mcp_cmd::add(transport.as_deref(), env, headers, name, target).await,
            Some(Command::Mcp(McpCommand::Remove { name })) => mcp_cmd::remove(name).await,
            Some(Command::Permissions(PermissionsCommand::Check { tool, input })) => {
                inspect::permissions_check(&cli.shared, tool, input).await
            }
            Some(Command::Sandbox(cli::SandboxCommand::Check { json })) => {
                sandbox_cmd::check(&cli.shared, *json).await
            }
            Some(Command::Config(ConfigCommand::Show { json })) => {
                inspect::config_show(&cli.shared, *json).await
            }
            Some(Command::Diagnostics(args)) => {
                tools_cmd::diagnostics(&cli.shared, &args.paths, args.json).await
            }
            Some(Command::Worktree(WorktreeCommand::List { json })) => {
                worktree_cmd::list(&cli.shared, *json).await
            }
            Some(Command::Worktree(WorktreeCommand::Remove { name, force })) => {
                worktree_cmd::remove(&cli.shared, name, *force).await
            }
        }
    });
    // Sessions may still own tool processes; the runtime drop kills them.
    drop(runtime);
    // Output that could not be written (other than to a reader that left)
    // is not a success.
    let code = if code == 0 && out::write_failed() {
        1
    } else {
        code
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
