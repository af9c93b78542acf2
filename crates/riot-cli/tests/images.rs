//! Images through `riot exec` against the strict mock (docs/interfaces.md,
//! Read): a Read of a 4000x3000 PNG made here reaches each wire format in
//! its own shape (Anthropic: an image block in the tool result; Chat
//! Completions: a text tool message and a user message with a data URL;
//! Responses: an `input_image`), downscaled to 1568x1176; a model without
//! vision gets the clear text instead of the image; `@shot.png` in the
//! prompt attaches the image; a model without vision reads the small
//! model's description when that one can see; images are stored beside
//! the transcript and a resumed session sends them again.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::io::Cursor;

use base64::Engine as _;
use image::{DynamicImage, GrayImage, ImageFormat, Luma};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call};

/// A 4000x3000 PNG (grey gradient: cheap to encode, not a flat colour).
fn big_png() -> Vec<u8> {
    let img = GrayImage::from_fn(4000, 3000, |x, y| Luma([((x / 16 + y / 12) % 256) as u8]));
    let mut out = Vec::new();
    DynamicImage::ImageLuma8(img)
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .unwrap();
    out
}

fn small_png() -> Vec<u8> {
    let img = GrayImage::from_fn(64, 48, |x, _| Luma([(x * 4) as u8]));
    let mut out = Vec::new();
    DynamicImage::ImageLuma8(img)
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .unwrap();
    out
}

fn world_with(vision: bool, files: &[(&str, &[u8])]) -> World {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"models": {"mock-model": {"vision": vision}}}).to_string(),
    )
    .unwrap();
    for (name, bytes) in files {
        std::fs::write(world.project.path().join(name), bytes).unwrap();
    }
    world
}

async fn model_reading(wire: Wire, file: &str) -> MockServer {
    MockServer::start(Script::new(
        wire,
        vec![
            tool_call("call_img_1", "Read", json!({"file_path": file})),
            Reply::Text("I see it.".into()),
        ],
    ))
    .await
    .unwrap()
}

/// The size of a `data:` URL's or base64 payload's image.
fn size_of(media_type: &str, data: &str) -> (u32, u32) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let format = ImageFormat::from_mime_type(media_type).unwrap();
    let img = image::load_from_memory_with_format(&bytes, format).unwrap();
    (img.width(), img.height())
}

fn data_url_size(url: &str) -> (u32, u32) {
    let (media_type, data) = url
        .strip_prefix("data:")
        .and_then(|r| r.split_once(";base64,"))
        .unwrap_or_else(|| panic!("not a data URL: {url:.80}"));
    size_of(media_type, data)
}

/// The tool result's text and the image sent for it, per wire format.
fn result_and_image(wire: Wire, body: &Value) -> (String, Option<(u32, u32)>) {
    match wire {
        Wire::Anthropic => {
            let result = support::tool_result(body, "call_img_1");
            let content = result["content"].as_array().unwrap();
            let text = content[0]["text"].as_str().unwrap().to_owned();
            let image = content.iter().find(|c| c["type"] == "image").map(|c| {
                assert_eq!(c["source"]["type"], "base64");
                size_of(
                    c["source"]["media_type"].as_str().unwrap(),
                    c["source"]["data"].as_str().unwrap(),
                )
            });
            (text, image)
        }
        Wire::Openai => {
            let messages = body["messages"].as_array().unwrap();
            let at = messages
                .iter()
                .position(|m| m["role"] == "tool" && m["tool_call_id"] == "call_img_1")
                .unwrap();
            // Tool messages cannot hold images: the text is a plain string.
            let text = messages[at]["content"].as_str().unwrap().to_owned();
            let image = messages.get(at + 1).and_then(|next| {
                assert_eq!(next["role"], "user");
                next["content"].as_array().and_then(|parts| {
                    parts
                        .iter()
                        .find(|p| p["type"] == "image_url")
                        .map(|p| data_url_size(p["image_url"]["url"].as_str().unwrap()))
                })
            });
            (text, image)
        }
        Wire::OpenaiResponses => {
            let input = body["input"].as_array().unwrap();
            let at = input
                .iter()
                .position(|i| i["type"] == "function_call_output" && i["call_id"] == "call_img_1")
                .unwrap();
            let text = input[at]["output"].as_str().unwrap().to_owned();
            let image = input.get(at + 1).and_then(|next| {
                assert_eq!(next["role"], "user");
                next["content"].as_array().and_then(|parts| {
                    parts
                        .iter()
                        .find(|p| p["type"] == "input_image")
                        .map(|p| data_url_size(p["image_url"].as_str().unwrap()))
                })
            });
            (text, image)
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_png_reaches_each_wire_format_downscaled_in_its_own_shape() {
    let png = big_png();
    for wire in [Wire::Anthropic, Wire::Openai, Wire::OpenaiResponses] {
        let world = world_with(true, &[("big.png", &png)]);
        let server = model_reading(wire, "big.png").await;
        let out = run(world.exec(&server, wire, &["What is in big.png?"])).await;
        assert_eq!(out.code, Some(0), "{wire:?}: {out:?}");
        assert_eq!(out.stdout.trim(), "I see it.", "{wire:?}");
        let all = bodies(&server);
        assert_eq!(
            all.len(),
            2,
            "{wire:?}: the strict mock accepted both requests"
        );
        let (text, image) = result_and_image(wire, &all[1]);
        assert_eq!(
            text,
            "Image big.png (4000x3000 px), downscaled to 1568x1176 px to fit the model's limit (1568 px on the long side, 5 MB).",
            "{wire:?}"
        );
        assert_eq!(image, Some((1568, 1176)), "{wire:?}");
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_vision_reads_that_it_cannot_see_and_no_image_is_sent() {
    let png = small_png();
    for wire in [Wire::Anthropic, Wire::Openai, Wire::OpenaiResponses] {
        let world = world_with(false, &[("shot.png", &png)]);
        let server = model_reading(wire, "shot.png").await;
        let out = run(world.exec(&server, wire, &["What is in shot.png?"])).await;
        assert_eq!(out.code, Some(0), "{wire:?}: {out:?}");
        let all = bodies(&server);
        assert_eq!(all.len(), 2, "{wire:?}");
        let body = all[1].to_string();
        assert!(
            body.contains("this model cannot read images"),
            "{wire:?}: {body:.2000}"
        );
        assert!(!body.contains("base64"), "{wire:?}: no image data is sent");
        server.shutdown().await;
    }
}

/// Every image the first user message carries, as `(media_type, base64)`.
fn prompt_images(wire: Wire, body: &Value) -> Vec<(String, String)> {
    let split = |url: &str| {
        let (t, d) = url
            .strip_prefix("data:")
            .and_then(|r| r.split_once(";base64,"))
            .unwrap();
        (t.to_owned(), d.to_owned())
    };
    match wire {
        Wire::Anthropic => body["messages"][0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "image")
            .map(|b| {
                (
                    b["source"]["media_type"].as_str().unwrap().to_owned(),
                    b["source"]["data"].as_str().unwrap().to_owned(),
                )
            })
            .collect(),
        Wire::Openai => {
            let user = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .unwrap();
            user["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["type"] == "image_url")
                .map(|p| split(p["image_url"]["url"].as_str().unwrap()))
                .collect()
        }
        Wire::OpenaiResponses => {
            let user = body["input"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .unwrap();
            user["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["type"] == "input_image")
                .map(|p| split(p["image_url"].as_str().unwrap()))
                .collect()
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_at_mentioned_image_in_the_prompt_is_attached_in_each_wire_format() {
    let png = small_png();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    for wire in [Wire::Anthropic, Wire::Openai, Wire::OpenaiResponses] {
        let world = world_with(true, &[("shot.png", &png)]);
        let server = MockServer::start(Script::new(wire, vec![Reply::Text("A gradient.".into())]))
            .await
            .unwrap();
        let out = run(world.exec(&server, wire, &["look at @shot.png"])).await;
        assert_eq!(out.code, Some(0), "{wire:?}: {out:?}");
        assert_eq!(out.stdout.trim(), "A gradient.");
        let all = bodies(&server);
        assert_eq!(all.len(), 1, "{wire:?}");
        assert_eq!(
            prompt_images(wire, &all[0]),
            vec![("image/png".to_owned(), b64.clone())],
            "{wire:?}"
        );
        let body = all[0].to_string();
        assert!(
            body.contains("Image shot.png (64x48 px)."),
            "{wire:?}: {body:.1500}"
        );
        server.shutdown().await;
    }
}

/// A model without vision, and a small model that can see.
fn world_with_describer(files: &[(&str, &[u8])]) -> World {
    let world = world_with(false, files);
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({
            "small_model": "mock-small",
            "models": {"mock-model": {"vision": false}, "mock-small": {"vision": true}}
        })
        .to_string(),
    )
    .unwrap();
    world
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_vision_reads_the_small_models_description_instead() {
    let png = small_png();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    for wire in [Wire::Anthropic, Wire::Openai, Wire::OpenaiResponses] {
        let world = world_with_describer(&[("shot.png", &png)]);
        let server = MockServer::start(Script::new(
            wire,
            vec![
                tool_call("call_img_1", "Read", json!({"file_path": "shot.png"})),
                Reply::Text("A grey gradient, dark on the left.".into()),
                Reply::Text("It is a gradient.".into()),
            ],
        ))
        .await
        .unwrap();
        let out = run(world.exec(&server, wire, &["What is in shot.png?"])).await;
        assert_eq!(out.code, Some(0), "{wire:?}: {out:?}");
        assert_eq!(out.stdout.trim(), "It is a gradient.", "{wire:?}");
        let all = bodies(&server);
        assert_eq!(all.len(), 3, "{wire:?}: the strict mock accepted all three");
        // The description request: the small model, given the image.
        assert_eq!(all[1]["model"], "mock-small", "{wire:?}");
        assert!(
            all[1].to_string().contains(&b64),
            "{wire:?}: {:.600}",
            all[1]
        );
        // The session's model reads the description where the image was,
        // and no image at all.
        assert_eq!(all[2]["model"], "mock-model", "{wire:?}");
        let body = all[2].to_string();
        assert!(
            body.contains(
                "[An image, described by mock-small because this model cannot read images:]\\nA grey gradient, dark on the left."
            ),
            "{wire:?}: {body:.3000}"
        );
        assert!(!body.contains(&b64), "{wire:?}: no image data is sent");
        assert!(
            !body.contains("cannot read images. Ask the person"),
            "{wire:?}"
        );
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_description_leaves_the_clear_note_and_the_turn_goes_on() {
    let png = small_png();
    let world = world_with_describer(&[("shot.png", &png)]);
    let wire = Wire::Anthropic;
    let server = MockServer::start(Script::new(
        wire,
        vec![
            Reply::Error {
                status: 400,
                body: json!({"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}).to_string(),
                headers: Vec::new(),
            },
            Reply::Text("I cannot see it.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(world.exec(&server, wire, &["look at @shot.png"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "I cannot see it.");
    let all = bodies(&server);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["model"], "mock-small");
    let body = all[1].to_string();
    assert!(
        body.contains("this model cannot read images"),
        "{body:.2000}"
    );
    assert!(!body.contains("base64"), "no image data is sent");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_are_kept_beside_the_transcript_and_a_resumed_session_sends_them_again() {
    let png = small_png();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let wire = Wire::Anthropic;
    let world = world_with(true, &[("shot.png", &png)]);
    let server = MockServer::start(Script::new(
        wire,
        vec![
            Reply::Text("A gradient.".into()),
            Reply::Text("Still a gradient.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(world.exec(&server, wire, &["look at @shot.png"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");

    // The transcript holds a reference; the image is a file of its own.
    let sessions = world.home.path().join("sessions");
    let transcript = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(!text.contains(&b64), "the transcript holds no image data");
    assert!(text.contains("\"riot-image:"), "{text:.2000}");
    let id = transcript.file_stem().unwrap().to_str().unwrap();
    let images: Vec<_> = std::fs::read_dir(world.home.path().join("sessions-images").join(id))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(images.len(), 1, "{images:?}");
    assert_eq!(std::fs::read(&images[0]).unwrap(), png);

    // Resumed, the first prompt's image goes to the model again.
    let out = run(world.exec(&server, wire, &["--continue", "and now?"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "Still a gradient.");
    let all = bodies(&server);
    assert_eq!(all.len(), 2);
    assert_eq!(
        prompt_images(wire, &all[1]),
        vec![("image/png".to_owned(), b64.clone())]
    );
    server.shutdown().await;
}

/// A description is saved with the session: resumed, the session reads
/// it again without asking the small model a second time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_reuses_the_saved_description() {
    let png = small_png();
    let wire = Wire::Anthropic;
    let world = world_with_describer(&[("shot.png", &png)]);
    let server = MockServer::start(Script::new(
        wire,
        vec![
            tool_call("call_img_1", "Read", json!({"file_path": "shot.png"})),
            Reply::Text("A grey gradient, dark on the left.".into()),
            Reply::Text("It is a gradient.".into()),
            Reply::Text("Still the gradient.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(world.exec(&server, wire, &["What is in shot.png?"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let first = bodies(&server);
    assert_eq!(first.len(), 3);
    assert_eq!(first[1]["model"], "mock-small", "one description request");

    // Saved beside the session's images, by the image's content.
    let dir = world.home.path().join("sessions-images");
    let session = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("descriptions.json")).unwrap())
            .unwrap();
    let entries = saved.as_object().unwrap();
    assert_eq!(entries.len(), 1, "{saved}");
    let (key, text) = entries.iter().next().unwrap();
    assert_eq!(key.len(), 64, "a SHA-256 in hex: {key}");
    assert_eq!(text, "A grey gradient, dark on the left.");

    let out = run(world.exec(&server, wire, &["--continue", "and now?"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "Still the gradient.");
    let all = bodies(&server);
    assert_eq!(all.len(), 4, "no second description request");
    assert_eq!(all[3]["model"], "mock-model");
    assert!(
        all[3]
            .to_string()
            .contains("A grey gradient, dark on the left."),
        "{:.2000}",
        all[3]
    );
    server.shutdown().await;
}
