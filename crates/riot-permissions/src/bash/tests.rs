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
