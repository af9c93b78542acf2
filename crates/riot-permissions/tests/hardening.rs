#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The permission chain against someone trying: one corpus per class of
//! escape an outside attack found, each row asserting the decision and
//! the reason it gives. Rows beyond the reported reproductions check that
//! each fix holds for the class, not the instance.

mod support;

use riot_protocol::{PermissionPolicy, PermissionResult, RuleBehavior, RuleSource};
use support::{PROJECT_FILES, TreeFs, mode, policy_on, query, rule};

/// `(command, words the reason must contain)` → Ask (safety), even in
/// bypass mode.
async fn all_ask_for_safety(p: &riot_permissions::Policy, mode_name: &str, rows: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for &(command, because) in rows {
        let result = p.decide(&query("Bash", command, mode(mode_name))).await;
        match &result {
            PermissionResult::Ask { reason, .. }
                if reason.kind() == "safety" && reason.detail().contains(because) => {}
            other => failures.push(format!(
                "{command:?}: expected a safety ask naming {because:?}, got {other:?}"
            )),
        }
    }
    support::assert_rows(&failures, rows.len());
}

async fn all_allowed(p: &riot_permissions::Policy, mode_name: &str, rows: &[&str]) {
    let mut failures = Vec::new();
    for &command in rows {
        let result = p.decide(&query("Bash", command, mode(mode_name))).await;
        if !matches!(result, PermissionResult::Allow { .. }) {
            failures.push(format!("{command:?}: expected allow, got {result:?}"));
        }
    }
    support::assert_rows(&failures, rows.len());
}

fn project_with(extra: &[&'static str], links: &[(&str, &str)]) -> TreeFs {
    let mut files: Vec<&str> = PROJECT_FILES.to_vec();
    files.extend_from_slice(extra);
    TreeFs::new(&files, links)
}

fn with_git() -> riot_permissions::Policy {
    policy_on(
        project_with(
            &[
                "/work/proj/.git/config",
                "/work/proj/.git/description",
                "/work/proj/.git/HEAD",
                "/work/proj/.env",
            ],
            &[],
        ),
        vec![],
    )
}

#[tokio::test]
async fn globs_in_a_write_target_are_resolved_on_disk_before_the_check() {
    let p = with_git();
    all_ask_for_safety(
        &p,
        "bypass",
        &[
            // The reported reproductions.
            ("echo INJECTED > .gi[t]/description", ".git/description"),
            ("echo '[core] x' >> .g*/config", ".git/config"),
            // The class.
            ("echo x > .gi?/HEAD", ".git/HEAD"),
            ("cp evil .gi*/hooks/pre-commit", ".git"),
            ("tee .[g]it/config < x", ".git/config"),
        ],
    )
    .await;
    // A glob that reaches nothing protected is not a finding.
    all_allowed(
        &p,
        "bypass",
        &["echo x > src/*.rs", "cat src/*.rs", "rm -f *.txt"],
    )
    .await;
}

#[tokio::test]
async fn without_a_disk_a_glob_that_could_reach_a_protected_name_is_assumed_to() {
    let p = riot_permissions::Policy::new(support::PROJECT, Some("/home/me".into()));
    all_ask_for_safety(
        &p,
        "bypass",
        &[
            ("echo INJECTED > .gi[t]/description", "git"),
            ("cat .e*", "secrets"),
            ("cat .env.p*", "secrets"),
            ("cat ~/.config/gh/*.yml", "credentials"),
            ("grep -r KEY .", "cannot look inside"),
        ],
    )
    .await;
    all_allowed(&p, "bypass", &["echo x > src/*.rs"]).await;
}

#[tokio::test]
async fn what_the_analysis_cannot_resolve_is_assumed_to_reach_protected_paths() {
    let p = with_git();
    all_ask_for_safety(
        &p,
        "bypass",
        &[
            (
                "echo x > \"$(echo .git)/config\"",
                "only known when it runs",
            ),
            ("echo x > $TARGET", "only known when it runs"),
            ("cp evil \"$DEST\"", "only known when it runs"),
            ("sh -c \"$PAYLOAD\"", "script Riot cannot read"),
            ("eval \"$X\"", "eval"),
            ("$EDITOR notes.txt", "command name"),
            ("cd \"$D\" && echo x > config", "directory only known"),
            (
                "find . -name config -exec cp evil {} \\;",
                "only known when it runs",
            ),
            ("ls | xargs cat", "only known when it runs"),
        ],
    )
    .await;
    // Resolved where it can be: variables set in the line, the home,
    // Riot's home, ANSI-C strings, `cd`.
    all_ask_for_safety(
        &p,
        "bypass",
        &[
            ("x=.git; echo y > $x/config", ".git/config"),
            (
                "d=.git/hooks && cp evil \"$d/pre-push\"",
                ".git/hooks/pre-push",
            ),
            ("echo x > $'\\x2egit/config'", ".git/config"),
            ("echo x >> $HOME/.zshrc", ".zshrc"),
            (
                "cd ~/.config && echo x > autostart/evil.desktop",
                "autostart",
            ),
            ("cd .. && echo x > proj/.git/config", ".git/config"),
            ("bash -c 'echo x > .git/config'", ".git/config"),
            ("bash -lc \"cp evil ~/.bashrc\"", ".bashrc"),
        ],
    )
    .await;
    // Unknown values in commands that open no file are harmless.
    all_allowed(
        &p,
        "bypass",
        &[
            "echo $(date)",
            "printf '%s' \"$X\"",
            "kill $PID",
            "sleep $N",
        ],
    )
    .await;
}

#[tokio::test]
async fn agent_configuration_and_riot_home_are_protected_also_when_riot_home_is_moved() {
    let p = support::policy(vec![]);
    all_ask_for_safety(
        &p,
        "bypass",
        &[
            // The reported reproduction.
            (
                "cp settings.json .riot/ && cp settings.json $RIOT_HOME/settings.json",
                ".riot",
            ),
            (
                "cp settings.json $RIOT_HOME/settings.json",
                "Riot's own configuration",
            ),
            ("cp hooks.json .claude/", ".claude"),
            ("mv x .riot/commands/deploy.md", ".riot"),
        ],
    )
    .await;
    let moved = riot_permissions::Policy::new(support::PROJECT, Some("/home/me".into()))
        .with_riot_home("/srv/riot-home")
        .with_file_system(std::sync::Arc::new(project_with(&[], &[])));
    all_ask_for_safety(
        &moved,
        "bypass",
        &[
            (
                "cp settings.json $RIOT_HOME/settings.json",
                "Riot's own configuration",
            ),
            ("cat $RIOT_HOME/credentials.json", "API keys"),
            ("cat /srv/riot-home/credentials.json", "API keys"),
            (
                "echo x > /srv/riot-home/hooks/x.json",
                "Riot's own configuration",
            ),
        ],
    )
    .await;
    // The Read tool and the shell agree on the moved home.
    let read = moved
        .decide(&query(
            "Read",
            "/srv/riot-home/credentials.json",
            mode("default"),
        ))
        .await;
    assert!(
        matches!(&read, PermissionResult::Ask { reason, .. } if reason.kind() == "safety"),
        "{read:?}"
    );
}

#[tokio::test]
async fn git_options_that_run_code_or_read_other_configuration_are_safety_findings() {
    let p = support::policy(vec![]);
    all_ask_for_safety(
        &p,
        "bypass",
        &[
            (
                "git -c core.fsmonitor=\"touch PWNED; false\" status",
                "git -c core.fsmonitor",
            ),
            ("git -c alias.x='!touch PWNED' x", "alias.x"),
            ("git -c core.pager='sh -c evil' log", "core.pager"),
            ("git -c core.sshCommand=evil fetch", "core.sshCommand"),
            ("git -c include.path=/tmp/evil status", "include.path"),
            ("git -c diff.external=evil diff", "diff.external"),
            ("git -c \"$K\"=x status", "only known when it runs"),
            ("git --config-env=core.pager=EVIL log", "--config-env"),
            ("git config include.path /tmp/evil", "include.path"),
            (
                "git config --local includeIf.onbranch:main.path /tmp/x",
                "includeIf",
            ),
            ("git init --template=/tmp/tpl", "--template"),
            (
                "git clone --config core.hooksPath=/tmp/h https://example.com/r",
                "core.hooksPath",
            ),
            (
                "git clone -c core.fsmonitor=evil https://example.com/r",
                "core.fsmonitor",
            ),
            ("git clone --upload-pack='touch x' host:r", "--upload-pack"),
            ("git --exec-path=/tmp/evil status", "--exec-path"),
            ("GIT_PAGER=evil git log", "GIT_PAGER"),
            ("GIT_DIR=/tmp/evil git status", "GIT_DIR"),
            ("echo x > ~/.config/git/config", ".config/git"),
            ("sudo git -c core.editor=evil commit", "core.editor"),
        ],
    )
    .await;
    // Harmless `-c` keys and read-only git stay as they were.
    all_allowed(
        &p,
        "bypass",
        &[
            "git -c color.ui=always log",
            "git -c user.name=x commit -m y",
        ],
    )
    .await;
    all_allowed(
        &p,
        "default",
        &["git status", "git config user.name", "git log -p"],
    )
    .await;
}

#[tokio::test]
async fn files_that_run_code_later_are_protected() {
    let p = support::policy(vec![]);
    all_ask_for_safety(
        &p,
        "bypass",
        &[
            ("echo 'au VimEnter * !evil' >> ~/.vimrc", ".vimrc"),
            ("echo 'evil' > .envrc", ".envrc"),
            ("echo '{}' > .vscode/tasks.json", ".vscode"),
            ("cp evil.desktop ~/.config/autostart/", "autostart"),
            ("cp evil ~/.local/bin/ls", ".local/bin"),
            ("echo '[build]' >> ~/.cargo/config.toml", ".cargo"),
            ("echo '[build]' > .cargo/config.toml", ".cargo"),
            ("cp evil ~/bin/git", "on the PATH"),
            ("ln -s evil ~/.config/systemd/user/x.service", "systemd"),
            ("echo x >> ~/.ssh/rc", ".ssh/rc"),
            ("cp evil ~/.bashrc.d/zz.sh", ".bashrc.d"),
            ("echo x >> ~/.config/fish/conf.d/x.fish", ".config/fish"),
            ("cp evil.plist ~/Library/LaunchAgents/", "launchagents"),
        ],
    )
    .await;
    for (tool, path) in [
        ("Write", "/home/me/.vimrc"),
        ("Write", ".envrc"),
        ("Edit", ".vscode/tasks.json"),
        ("Write", "/home/me/.local/bin/ls"),
        ("Write", "/home/me/.cargo/config.toml"),
        ("Write", "/home/me/.config/autostart/x.desktop"),
        ("Write", ".riot/settings.json"),
    ] {
        let result = p.decide(&query(tool, path, mode("bypass"))).await;
        assert!(
            matches!(&result, PermissionResult::Ask { reason, .. } if reason.kind() == "safety"),
            "{tool} {path}: {result:?}"
        );
    }
}

#[tokio::test]
async fn recursive_readers_are_asked_when_the_tree_holds_secret_files() {
    let p = policy_on(
        project_with(
            &[
                "/work/proj/.env",
                "/work/proj/config/server.key",
                "/work/proj/config/app.toml",
            ],
            &[],
        ),
        vec![],
    );
    all_ask_for_safety(
        &p,
        "default",
        &[
            // The reported reproductions.
            ("grep -r API_KEY .", ".env"),
            ("rg --hidden API_KEY", ".env"),
            ("rg -uu API_KEY", ".env"),
            // The class.
            ("grep -rn KEY config", "server.key"),
            ("grep -R KEY", ".env"),
            ("egrep --recursive KEY .", ".env"),
            ("rg --no-ignore KEY config", "server.key"),
            (
                "cd config && grep -r KEY .",
                "prints every file it searches",
            ),
            ("cat .e*", ".env"),
            ("cat config/*", "server.key"),
        ],
    )
    .await;
    // The same searches where no secret lives, or filtered to files no
    // secret is, are still read-only.
    all_allowed(
        &p,
        "default",
        &[
            "grep -rn KEY src",
            "rg KEY",
            "rg --hidden -g '*.rs' KEY",
            "grep -r --include='*.rs' KEY .",
        ],
    )
    .await;
    all_allowed(&p, "bypass", &["cat src/*", "wc -l config/*.toml"]).await;
}

#[tokio::test]
async fn a_deny_rule_cannot_be_evaded_by_spelling_the_command_differently() {
    let deny = rule("Bash(rm *)", RuleBehavior::Deny, RuleSource::CliFlag);
    let p = support::policy(vec![deny]);
    let rows = [
        // The reported reproductions.
        "/bin/rm -rf src",
        "$'\\x72\\x6d' -rf src",
        "bash -c 'rm -rf src'",
        "busybox rm -rf src",
        "x=rm; $x -rf src",
        "find . -exec rm -rf {} +",
        "watch rm -rf src",
        // The class.
        "sudo /usr/bin/rm -rf src",
        "\"$(echo rm)\" -rf src",
        "xargs rm < list.txt",
        "env -i rm -rf src",
        "command rm -rf src",
        "sh -c \"$X\"",
        "eval 'rm -rf src'",
        "find src -execdir /bin/rm {} \\;",
        "toybox rm x",
        "timeout 5 busybox rm x",
    ];
    let mut failures = Vec::new();
    for command in rows {
        let result = p.decide(&query("Bash", command, mode("bypass"))).await;
        match &result {
            PermissionResult::Deny { reason, message }
                if reason.kind() == "rule" && message.contains("`Bash(rm *)`") => {}
            other => failures.push(format!(
                "{command:?}: expected deny by the rule, got {other:?}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Unknown parts that cannot spell the rule do not match it.
    all_allowed(
        &p,
        "bypass",
        &["ls src", "echo rm", "git rm --cached x", "cargo test"],
    )
    .await;
    // A match that relied on an unknown part says so.
    let PermissionResult::Deny { message, .. } = p
        .decide(&query("Bash", "$CMD -rf src", mode("bypass")))
        .await
    else {
        panic!("expected a deny");
    };
    assert!(
        message.contains("only known when it runs, so Riot assumes the rule matches"),
        "{message}"
    );
}

#[tokio::test]
async fn a_dangling_symlink_is_judged_by_where_it_leads() {
    let p = policy_on(
        project_with(
            &[],
            &[
                ("/work/proj/report.txt", "/tmp/outside/new.txt"),
                ("/work/proj/notes.md", "../proj/.git/hooks/pre-commit"),
            ],
        ),
        vec![],
    );
    // Outside the project, though the link itself is inside.
    let out = p
        .decide(&query("Write", "report.txt", mode("accept-edits")))
        .await;
    let PermissionResult::Ask { reason, message } = out else {
        panic!("expected an ask, got {out:?}");
    };
    assert_eq!(reason.kind(), "mode");
    assert!(message.contains("/tmp/outside/new.txt"), "{message}");
    // Into a protected file, even in bypass.
    let hook = p.decide(&query("Write", "notes.md", mode("bypass"))).await;
    assert!(
        matches!(&hook, PermissionResult::Ask { reason, .. } if reason.kind() == "safety" && reason.detail().contains(".git/hooks/pre-commit")),
        "{hook:?}"
    );
}

/// Escapes a review of the first version of this change found.
#[tokio::test]
async fn constructs_the_walk_does_not_understand_are_still_judged_inside() {
    let p = with_git();
    all_ask_for_safety(
        &p,
        "bypass",
        &[
            (
                "case x in *) cp /tmp/p .git/hooks/pre-commit;; esac",
                ".git",
            ),
            ("f(){ rm -rf .git; }; f", ".git"),
            ("export X=\"$(rm -rf .git)\"", ".git"),
            ("HOME=.git; echo '[core]' >> ~/config", ".git/config"),
            ("cd .gi? && echo x >> config", "directory only known"),
            ("cd - && echo x > config", "directory only known"),
            ("bash -c -e 'echo x >> ~/.bashrc'", ".bashrc"),
            ("echo 'rm -rf .git' | bash", "reading its input"),
            ("env -S 'cp evil .git/hooks/pre-commit'", ".git"),
            ("{cp,/tmp/p,.git/hooks/pre-commit}", ".git/hooks/pre-commit"),
            (
                "tee .git/hooks/pre-commi{t,x} < /tmp/p",
                ".git/hooks/pre-commi",
            ),
            ("shopt -s dotglob; rm -rf *", "shopt"),
            (
                "find ~ -maxdepth 0 -exec cp e {}/bin/git \\;",
                "only known when it runs",
            ),
            ("install -m755 -t.git/hooks p", ".git/hooks"),
            (
                "git --work-tree . config core.fsmonitor x",
                "core.fsmonitor",
            ),
            ("git config set core.hooksPath /tmp/h", "core.hooksPath"),
            (
                "git config --type path core.hooksPath /tmp/h",
                "core.hooksPath",
            ),
            ("echo x > $'\\456git/config'", ".git/config"),
            ("cat ~/.ssh/github", "private key"),
            ("grep -d recurse '' .", ".env"),
            ("grep -r -eKEY .", ".env"),
            ("grep -r --regexp=KEY .", ".env"),
        ],
    )
    .await;
}

#[tokio::test]
async fn ordinary_commands_that_mention_tricky_words_stay_allowed() {
    let p = policy_on(project_with(&["/work/proj/.env"], &[]), vec![]);
    all_allowed(
        &p,
        "default",
        &[
            "grep -n xargs README.md",
            "rg xargs",
            "rg -trust foo",
            "cd src && ls",
            "git log --oneline",
        ],
    )
    .await;
    all_allowed(
        &p,
        "bypass",
        &["cd .vscode && ls", "echo '{}' | jq .", "bash script.sh"],
    )
    .await;
    // The Write tool knows `~/bin` like the shell does.
    let w = p
        .decide(&query("Write", "/home/me/bin/git", mode("bypass")))
        .await;
    assert!(
        matches!(&w, PermissionResult::Ask { reason, .. } if reason.detail().contains("on the PATH")),
        "{w:?}"
    );
}

#[tokio::test]
async fn a_recursive_reader_following_links_is_judged_by_where_they_lead() {
    let p = policy_on(
        project_with(
            &["/home/me/.aws/credentials"],
            &[("/work/proj/deploy", "/home/me/.aws")],
        ),
        vec![],
    );
    all_ask_for_safety(
        &p,
        "default",
        &[("grep -R aws_secret .", "links to `/home/me/.aws`")],
    )
    .await;
    // Without the link the same search is read-only.
    all_allowed(
        &support::policy(vec![]),
        "default",
        &["grep -R aws_secret ."],
    )
    .await;
}
