use super::*;

#[test]
fn quoted_separators_do_not_split() {
    let a = analyze_command("echo 'a; b' \"c && d\"");
    assert_eq!(a.subcommands.len(), 1);
    assert_eq!(a.subcommands[0].argv(), ["echo", "a; b", "c && d"]);
    assert!(a.is_read_only());
}

#[test]
fn every_separator_splits() {
    let a = analyze_command("ls; pwd && echo a || true | cat\nwc -l");
    let names: Vec<_> = a
        .subcommands
        .iter()
        .map(|s| s.words[0].text.clone())
        .collect();
    assert_eq!(names, ["ls", "pwd", "echo", "true", "cat", "wc"]);
    assert!(a.is_read_only());
}

#[test]
fn nested_substitutions_are_subcommands() {
    let a = analyze_command("echo $(rm -rf /tmp/x)");
    assert!(
        a.subcommands
            .iter()
            .any(|s| s.argv() == ["rm", "-rf", "/tmp/x"])
    );
    assert!(a.unverifiable().is_some());
    assert!(!a.is_read_only());
}

#[test]
fn a_later_dangerous_finding_is_not_hidden_by_an_earlier_unverifiable_one() {
    let a = analyze_command("echo $HOME; eval \"$CMD\"");
    assert!(a.unverifiable().is_some());
    assert!(a.dangerous().is_some_and(|d| d.contains("eval")));
}

#[test]
fn wrappers_strip_only_in_their_exact_shape() {
    let text = |c: &str| analyze_command(c).subcommands[0].stripped_match_text();
    assert_eq!(
        text("timeout -k 5 30 npm test").as_deref(),
        Some("npm test")
    );
    assert_eq!(
        text("timeout 30 nice -n 5 git push").as_deref(),
        Some("git push")
    );
    assert_eq!(text("nohup time -p make").as_deref(), Some("make"));
    assert_eq!(text("env FOO=1 npm test").as_deref(), Some("npm test"));
    assert_eq!(text("env LD_PRELOAD=x ls"), None);
    assert_eq!(text("timeout --weird 30 ls"), None);
    assert_eq!(text("sudo rm -rf /"), None);
}

#[test]
fn wrapper_shapes() {
    let text = |c: &str| analyze_command(c).subcommands[0].stripped_match_text();
    assert_eq!(
        text("timeout --signal=KILL 5 make").as_deref(),
        Some("make")
    );
    assert_eq!(text("timeout -s TERM 1.5m make").as_deref(), Some("make"));
    assert_eq!(
        text("timeout --preserve-status 10s make").as_deref(),
        Some("make")
    );
    assert_eq!(text("timeout 5x make"), None);
    assert_eq!(text("nice -5 make").as_deref(), Some("make"));
    assert_eq!(text("nice --adjustment=3 make").as_deref(), Some("make"));
    assert_eq!(text("nice -n x make"), None);
    assert_eq!(text("time -p make").as_deref(), Some("make"));
    assert_eq!(text("time -v make"), None);
    assert_eq!(text("env -i make"), None);
    assert_eq!(text("timeout 5"), None);
}

#[test]
fn cd_is_harmless_unless_it_enters_a_protected_directory() {
    assert!(analyze_command("cd src && ls -la").is_read_only());
    assert!(
        analyze_command("cd .git && echo x > config")
            .dangerous()
            .is_some()
    );
    assert!(analyze_command("cd ~/.ssh && ls").dangerous().is_some());
    assert!(!analyze_command("cd a b").is_read_only());
}

/// A finding that exists only because something is known only when the
/// command runs, and only matters for what the command may write, is a
/// grade of its own (an OS sandbox that keeps the protected paths may
/// enforce it); reading through such a word and dangerous constructs stay
/// dangerous. Neither makes a command read-only.
#[test]
fn run_time_words_handed_to_a_writer_are_a_grade_of_their_own() {
    let ctx = Context {
        home: Some("/home/me".into()),
        riot_home: None,
        cwd: Some("/p".into()),
    };
    let only_known_when_it_runs = [
        (
            r#"for f in *.txt; do cp "$f" "$f.bak"; done"#,
            "`$f` is only known when it runs, so it could name a protected path",
        ),
        (
            "echo x > $T",
            "redirects into `$T`, which is only known when it runs, so it could be a protected file",
        ),
        (
            "cd \"$D\" && echo x > config",
            "redirects into `config` in a directory only known when it runs, so it could be a protected file",
        ),
        (
            "cd \"$D\" && cp a b",
            "`cp a b` runs in a directory only known when it runs, so `a` could be a protected path",
        ),
        (
            "cp $(cat list) dest/",
            "`$(cat list)` is only known when it runs, so it could name a protected path",
        ),
        (
            "ls | xargs rm",
            "`(items xargs reads)` is only known when it runs, so it could name a protected path",
        ),
        (
            "bash -c 'cp \"$f\" x'",
            "inside `bash -c`: `$f` is only known when it runs, so it could name a protected path",
        ),
    ];
    for (command, finding) in only_known_when_it_runs {
        let a = analyze_command_in(command, &ctx);
        assert_eq!(a.runtime_unknown(), Some(finding), "{command}");
        assert_eq!(a.dangerous(), None, "{command}");
        assert!(!a.is_read_only(), "{command}");
    }
    let dangerous = [
        (
            "for f in *.txt; do cat \"$f\"; done",
            "`$f` is only known when it runs, so it could name a credential file",
        ),
        (
            "ls | xargs cat",
            "`(items xargs reads)` is only known when it runs, so it could name a credential file",
        ),
        (
            "cat < $f",
            "redirects from `$f`, which is only known when it runs, so it could be a protected file",
        ),
        (
            "$EDITOR notes.txt",
            "the command name `$EDITOR` is only known when it runs, so it could be anything",
        ),
        (
            "sh -c \"$X\"",
            "`sh -c` runs a script Riot cannot read, so it could do anything",
        ),
        (
            "git -c \"$K\"=x status",
            "`git -c` sets configuration only known when it runs, which could make git run code",
        ),
    ];
    for (command, finding) in dangerous {
        let a = analyze_command_in(command, &ctx);
        assert_eq!(a.dangerous(), Some(finding), "{command}");
        assert!(!a.is_read_only(), "{command}");
    }
    // A command that opens no file has nothing to find.
    let a = analyze_command_in("echo \"$f\"", &ctx);
    assert_eq!((a.dangerous(), a.runtime_unknown()), (None, None));
}
