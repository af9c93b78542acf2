//! The Browser tool over a recording stand-in for the browser: what each
//! action asks of it, the address checks on navigation, and the image a
//! screenshot gives the model. (riot-runtime's tests/browser.rs and
//! riot-cli's tests/browser.rs drive a real Chromium.)

use std::collections::HashMap;
use std::io::Cursor;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use base64::Engine;
use riot_protocol::{
    Browser as BrowserCap, BrowserAction, BrowserError, BrowserResult, BrowserTarget,
    DecisionReason, FixedClock, ImageSource, PermissionResult, Tool, ToolContext, ToolOutcome,
    ToolResultContent, Web, WebError, WebRequest, WebResponse,
};

use super::*;
use crate::testing::{context, null_env, text_of};

/// Names resolved from a table; nothing is fetched.
#[derive(Debug, Default)]
struct Names(HashMap<String, Vec<IpAddr>>);

#[async_trait]
impl Web for Names {
    fn available(&self) -> bool {
        true
    }
    async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, WebError> {
        match host.parse::<IpAddr>() {
            Ok(ip) => Ok(vec![ip]),
            Err(_) => self.0.get(host).cloned().ok_or(WebError::Failed {
                url: host.into(),
                reason: "no such host".into(),
            }),
        }
    }
    async fn fetch(&self, _request: WebRequest) -> Result<WebResponse, WebError> {
        Err(WebError::Unavailable)
    }
}

/// Records every action and answers with a fixed page.
#[derive(Debug, Default)]
struct Recorder {
    actions: Mutex<Vec<BrowserAction>>,
}

fn png() -> String {
    let img = image::RgbaImage::from_pixel(4, 3, image::Rgba([200, 10, 10, 255]));
    let mut bytes = Vec::new();
    img.write_to(&mut Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[async_trait]
impl BrowserCap for Recorder {
    fn available(&self) -> bool {
        true
    }
    async fn act(&self, action: BrowserAction) -> Result<BrowserResult, BrowserError> {
        self.actions.lock().unwrap().push(action.clone());
        let mut result = BrowserResult {
            url: "http://docs.example/".into(),
            title: "Docs".into(),
            text: "heading \"Docs\" level=1\nbutton \"Go\" [ref=e1]\n".into(),
            image: None,
        };
        match action {
            BrowserAction::Screenshot => {
                result.image = Some(ImageSource {
                    media_type: "image/png".into(),
                    data: png(),
                });
            }
            BrowserAction::Click {
                target: BrowserTarget::Ref(r),
            } if r == "e9" => {
                return Err(BrowserError::Failed(
                    "there is no element e9 in the last snapshot; take a snapshot and use one of its refs".into(),
                ));
            }
            _ => {}
        }
        Ok(result)
    }
    async fn close(&self) {}
}

struct Rig {
    browser: Arc<Recorder>,
    ctx: ToolContext,
}

fn rig() -> Rig {
    let mut env = null_env(FixedClock::at(0));
    let browser = Arc::new(Recorder::default());
    env.browser = browser.clone();
    let mut names = Names::default();
    names.0.insert(
        "docs.example".into(),
        vec!["93.184.215.14".parse().unwrap()],
    );
    names
        .0
        .insert("intranet.example".into(), vec!["10.1.2.3".parse().unwrap()]);
    names.0.insert(
        "metadata.example".into(),
        vec!["169.254.169.254".parse().unwrap()],
    );
    env.web = Arc::new(names);
    Rig {
        browser,
        ctx: context(Arc::new(env)),
    }
}

fn input(json: serde_json::Value) -> BrowserInput {
    serde_json::from_value(json).unwrap()
}

#[tokio::test]
async fn navigate_loads_the_url_and_frames_the_page_as_untrusted() {
    let rig = rig();
    let tool = Browser::default();
    let call = input(serde_json::json!({"action": "navigate", "url": "http://docs.example/"}));
    assert!(tool.validate_input(&call, &rig.ctx).await.is_ok());
    assert_eq!(
        tool.check_permissions(&call, &rig.ctx).await,
        PermissionResult::Passthrough
    );
    assert_eq!(
        tool.permission_target(&call, &rig.ctx),
        PermissionTarget::Url {
            url: "http://docs.example/".into()
        }
    );
    let out = tool.call(call, &rig.ctx).await;
    assert_eq!(
        text_of(&out),
        format!(
            "Page: Docs — http://docs.example/\n{UNTRUSTED}\n<web_content url=\"http://docs.example/\">\nheading \"Docs\" level=1\nbutton \"Go\" [ref=e1]\n</web_content>"
        )
    );
    assert_eq!(
        *rig.browser.actions.lock().unwrap(),
        [BrowserAction::Navigate {
            url: "http://docs.example/".into()
        }]
    );
}

#[tokio::test]
async fn a_metadata_address_is_denied_and_never_reaches_the_browser() {
    let rig = rig();
    let tool = Browser::default();
    for url in ["http://169.254.169.254/latest/", "http://metadata.example/"] {
        let call = input(serde_json::json!({"action": "navigate", "url": url}));
        let PermissionResult::Deny { reason, message } =
            tool.check_permissions(&call, &rig.ctx).await
        else {
            panic!("{url} was not denied");
        };
        assert!(matches!(reason, DecisionReason::Safety { .. }));
        assert!(
            message.contains("169.254.169.254, a link-local or cloud-metadata address"),
            "{message}"
        );
        // Were it called anyway, the call checks again and refuses.
        let out = tool.call(call, &rig.ctx).await;
        assert!(out.is_failed());
        assert!(
            text_of(&out).contains("Riot never loads pages from those"),
            "{}",
            text_of(&out)
        );
    }
    assert!(rig.browser.actions.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_private_address_is_asked_and_loads_only_once_approved() {
    let rig = rig();
    let tool = Browser::default();
    let call =
        input(serde_json::json!({"action": "navigate", "url": "http://intranet.example/app"}));
    // Not asked (no approval recorded for this call): refused unloaded.
    let out = tool.call(call.clone(), &rig.ctx).await;
    assert!(
        text_of(&out).contains("which was not approved for this call"),
        "{}",
        text_of(&out)
    );
    assert!(rig.browser.actions.lock().unwrap().is_empty());
    let PermissionResult::Ask { reason, message } = tool.check_permissions(&call, &rig.ctx).await
    else {
        panic!("a private address must be asked");
    };
    assert_eq!(
        reason,
        DecisionReason::Safety {
            detail: "intranet.example resolves to 10.1.2.3, on this machine or its private network; local addresses are asked about in every mode".into()
        }
    );
    assert_eq!(
        message,
        "Riot wants to open http://intranet.example/app in the browser: intranet.example resolves to 10.1.2.3, on this machine or its private network."
    );
    assert!(!tool.call(call, &rig.ctx).await.is_failed());
    assert_eq!(rig.browser.actions.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn inputs_are_checked_before_the_browser_is_asked() {
    let rig = rig();
    let tool = Browser::default();
    let cases = [
        (
            serde_json::json!({"action": "click"}),
            "action \"click\" needs `ref` (from a snapshot) or `selector`.",
        ),
        (
            serde_json::json!({"action": "type", "ref": "e1"}),
            "action \"type\" needs `text`.",
        ),
        (
            serde_json::json!({"action": "press"}),
            "action \"press\" needs `key`.",
        ),
        (
            serde_json::json!({"action": "navigate"}),
            "action \"navigate\" needs `url`.",
        ),
        (
            serde_json::json!({"action": "navigate", "url": "file:///etc/passwd"}),
            "Browser loads only http:// and https:// URLs, not file:.",
        ),
        (
            serde_json::json!({"action": "navigate", "url": "http://u:p@docs.example/"}),
            "URLs with credentials (user:password@) are refused; load the URL without them.",
        ),
        (
            serde_json::json!({"action": "click", "ref": "e1", "selector": "#go"}),
            "give either `ref` or `selector`, not both.",
        ),
    ];
    for (json, want) in cases {
        let err = tool
            .validate_input(&input(json.clone()), &rig.ctx)
            .await
            .unwrap_err();
        assert_eq!(err.message, want, "{json}");
    }
    // Script evaluation is not an action.
    assert!(
        serde_json::from_value::<BrowserInput>(serde_json::json!({"action": "evaluate"})).is_err()
    );
    assert!(rig.browser.actions.lock().unwrap().is_empty());
}

#[tokio::test]
async fn actions_reach_the_browser_by_ref_or_selector() {
    let rig = rig();
    let tool = Browser::default();
    for json in [
        serde_json::json!({"action": "click", "ref": "e1"}),
        serde_json::json!({"action": "type", "selector": "#name", "text": "Ada"}),
        serde_json::json!({"action": "select", "ref": "e2", "text": "Large"}),
        serde_json::json!({"action": "press", "key": "Enter"}),
        serde_json::json!({"action": "back"}),
    ] {
        assert!(!tool.call(input(json), &rig.ctx).await.is_failed());
    }
    assert_eq!(
        *rig.browser.actions.lock().unwrap(),
        [
            BrowserAction::Click {
                target: BrowserTarget::Ref("e1".into())
            },
            BrowserAction::Type {
                target: BrowserTarget::Selector("#name".into()),
                text: "Ada".into()
            },
            BrowserAction::Select {
                target: BrowserTarget::Ref("e2".into()),
                value: "Large".into()
            },
            BrowserAction::Press {
                target: None,
                key: "Enter".into()
            },
            BrowserAction::Back,
        ]
    );
    let out = tool
        .call(
            input(serde_json::json!({"action": "click", "ref": "e9"})),
            &rig.ctx,
        )
        .await;
    assert_eq!(
        text_of(&out),
        "Browser click: there is no element e9 in the last snapshot; take a snapshot and use one of its refs."
    );
}

#[tokio::test]
async fn a_screenshot_reaches_the_model_as_an_image() {
    let rig = rig();
    let tool = Browser::default();
    let out = tool
        .call(input(serde_json::json!({"action": "screenshot"})), &rig.ctx)
        .await;
    let ToolOutcome::Ok { model_content, .. } = out else {
        panic!("{out:?}");
    };
    let [
        ToolResultContent::Text { text },
        ToolResultContent::Image { source },
    ] = &model_content[..]
    else {
        panic!("{model_content:?}");
    };
    assert_eq!(
        text,
        "Image screenshot (4x3 px). Page: Docs — http://docs.example/"
    );
    assert_eq!(source.media_type, "image/png");
}

#[tokio::test]
async fn reading_is_read_only_acting_is_not_and_the_tool_is_deferred() {
    let tool = Browser::default();
    let read_only: Vec<bool> = [
        "snapshot",
        "screenshot",
        "console",
        "click",
        "navigate",
        "back",
    ]
    .iter()
    .map(|a| tool.is_read_only(&input(serde_json::json!({"action": a, "url": "http://x/"}))))
    .collect();
    assert_eq!(read_only, [true, true, true, false, false, false]);
    assert!(Tool::deferred(&tool));
    let without = crate::testing::context(Arc::new(null_env(FixedClock::at(0))));
    let out = tool
        .call(input(serde_json::json!({"action": "snapshot"})), &without)
        .await;
    assert_eq!(
        text_of(&out),
        "No browser is available in this session; install Chromium or set `browser.executable`."
    );
}

#[test]
fn a_host_that_does_not_resolve_is_named_with_what_to_check() {
    let e = LoadError::from(WebError::Unavailable);
    assert_eq!(
        e.to_string(),
        "web access is not available in this session; check the URL's host name."
    );
    assert!(
        std::error::Error::source(&e).is_some(),
        "the web error is kept"
    );
}
