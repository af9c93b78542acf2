use std::io::Cursor;

use base64::Engine as _;
use image::codecs::gif::GifEncoder;
use image::{Delay, DynamicImage, Frame, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use riot_protocol::{Tool, ToolOutcome, ToolResultContent, UiPayload};

use super::*;
use crate::testing::{TempProject, text_of};
use crate::tools::read::{Read, ReadInput};

fn input(path: &str) -> ReadInput {
    serde_json::from_value(serde_json::json!({ "file_path": path })).unwrap()
}

fn encoded(img: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), format).unwrap();
    out
}

fn png(w: u32, h: u32) -> Vec<u8> {
    let img = RgbImage::from_fn(w, h, |x, y| Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
    encoded(&DynamicImage::ImageRgb8(img), ImageFormat::Png)
}

/// The image block of a successful Read, decoded.
fn sent_image(out: &ToolOutcome) -> (String, Vec<u8>) {
    let ToolOutcome::Ok { model_content, .. } = out else {
        panic!("read failed: {}", text_of(out))
    };
    let images: Vec<_> = model_content
        .iter()
        .filter_map(|c| match c {
            ToolResultContent::Image { source } => Some(source),
            ToolResultContent::Text { .. } | ToolResultContent::Document { .. } => None,
        })
        .collect();
    assert_eq!(images.len(), 1, "one image block");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&images[0].data)
        .unwrap();
    (images[0].media_type.clone(), bytes)
}

#[tokio::test]
async fn a_small_png_is_sent_unchanged_after_a_note() {
    let p = TempProject::new();
    let file = png(40, 20);
    p.write("pic.png", &file);
    let out = Read.call(input("pic.png"), &p.ctx()).await;
    assert_eq!(text_of(&out), "Image pic.png (40x20 px).");
    let (media_type, bytes) = sent_image(&out);
    assert_eq!(media_type, "image/png");
    assert_eq!(bytes, file);
    let ToolOutcome::Ok { ui_payload, .. } = out else {
        unreachable!()
    };
    assert_eq!(
        ui_payload,
        Some(UiPayload::ImageRead {
            path: "pic.png".into(),
            media_type: "image/png".into(),
            bytes: file.len() as u64,
        })
    );
}

#[tokio::test]
async fn a_4000x3000_png_is_downscaled_keeping_its_aspect_ratio() {
    let p = TempProject::new();
    // Grey: a 4000x3000 RGB PNG takes long to make in a debug build.
    let grey = image::GrayImage::from_fn(4000, 3000, |x, y| {
        image::Luma([((x / 16 + y / 12) % 256) as u8])
    });
    p.write(
        "big.png",
        encoded(&DynamicImage::ImageLuma8(grey), ImageFormat::Png),
    );
    let out = Read.call(input("big.png"), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "Image big.png (4000x3000 px), downscaled to 1568x1176 px to fit the model's limit (1568 px on the long side, 5 MB)."
    );
    let (media_type, bytes) = sent_image(&out);
    let img = image::load_from_memory(&bytes).unwrap();
    assert_eq!((img.width(), img.height()), (1568, 1176));
    assert_eq!(media_type, "image/png");
}

#[test]
fn an_image_over_the_byte_limit_is_made_smaller_until_it_fits() {
    // Noise does not compress: 600x600 RGB is ~1 MB as PNG.
    let mut seed = 7u32;
    let img = RgbImage::from_fn(600, 600, |_, _| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let b = seed.to_le_bytes();
        Rgb([b[1], b[2], b[3]])
    });
    let file = encoded(&DynamicImage::ImageRgb8(img), ImageFormat::Png);
    let limits = ImageLimits {
        max_side: 1568,
        max_bytes: 100 * 1024,
    };
    assert!(file.len() > limits.max_bytes);
    let p = prepare(&file, "image/png", limits).unwrap();
    assert!(p.bytes.len() <= limits.max_bytes, "{} bytes", p.bytes.len());
    assert!(p.downscaled || p.media_type == "image/jpeg");
    let sent = image::load_from_memory(&p.bytes).unwrap();
    assert_eq!((sent.width(), sent.height()), p.sent);
    assert_eq!(sent.width(), sent.height(), "square stays square");
}

#[tokio::test]
async fn an_animated_gif_sends_its_first_frame() {
    let p = TempProject::new();
    let mut file = Vec::new();
    {
        let mut enc = GifEncoder::new(&mut file);
        for colour in [[255, 0, 0, 255], [0, 0, 255, 255]] {
            let frame = Frame::from_parts(
                RgbaImage::from_pixel(8, 6, Rgba(colour)),
                0,
                0,
                Delay::from_numer_denom_ms(100, 1),
            );
            enc.encode_frame(frame).unwrap();
        }
    }
    p.write("anim.gif", &file);
    let out = Read.call(input("anim.gif"), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "Image anim.gif (8x6 px), an animated GIF: only its first frame is shown."
    );
    let (media_type, bytes) = sent_image(&out);
    assert_eq!(media_type, "image/png");
    let first = image::load_from_memory(&bytes).unwrap().to_rgba8();
    assert_eq!(first.dimensions(), (8, 6));
    assert_eq!(first.get_pixel(3, 3), &Rgba([255, 0, 0, 255]));
}

#[tokio::test]
async fn jpeg_and_webp_are_read_and_the_bytes_decide_the_media_type() {
    let p = TempProject::new();
    let img = DynamicImage::ImageRgb8(RgbImage::from_pixel(30, 10, Rgb([10, 200, 30])));
    p.write("a.jpeg", encoded(&img, ImageFormat::Jpeg));
    p.write("b.webp", encoded(&img, ImageFormat::WebP));
    // A PNG saved under a .jpg name is sent as what it is.
    p.write("c.jpg", png(5, 5));
    let cx = p.ctx();
    for (name, want, size) in [
        ("a.jpeg", "image/jpeg", "30x10"),
        ("b.webp", "image/webp", "30x10"),
        ("c.jpg", "image/png", "5x5"),
    ] {
        let out = Read.call(input(name), &cx).await;
        assert_eq!(text_of(&out), format!("Image {name} ({size} px)."));
        assert_eq!(sent_image(&out).0, want, "{name}");
    }
}

#[tokio::test]
async fn a_corrupt_png_gives_a_clear_error() {
    let p = TempProject::new();
    let mut file = png(50, 50);
    file.truncate(60);
    p.write("broken.png", &file);
    p.write("notes.png", b"just some text");
    let out = Read.call(input("broken.png"), &p.ctx()).await;
    let ToolOutcome::Failed { .. } = out else {
        panic!("a truncated PNG was accepted")
    };
    let text = text_of(&out);
    assert!(
        text.starts_with("broken.png is not a valid image/png image ("),
        "{text}"
    );
    assert!(
        text.ends_with("); the file may be corrupt or truncated. Check that it is the image you meant; open and save it again if it is damaged."),
        "{text}"
    );
    let out = Read.call(input("notes.png"), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "notes.png is not a PNG, JPEG, GIF or WebP image although its name says image/png. Check that it is the image you meant; open and save it again if it is damaged."
    );
}
