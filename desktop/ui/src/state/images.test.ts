import { describe, expect, it } from "vitest";

import { MAX_IMAGE_BYTES, formatBytes, readImages, sniffImageType, toBase64 } from "./images";

/** A 1×1 PNG. */
const PNG_1PX = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);

describe("sniffImageType", () => {
  it("knows PNG, JPEG, GIF and WebP by their first bytes, and nothing else", () => {
    expect(sniffImageType(PNG_1PX)).toBe("image/png");
    expect(sniffImageType(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffImageType(new TextEncoder().encode("GIF89a...."))).toBe("image/gif");
    expect(sniffImageType(new TextEncoder().encode("GIF87a...."))).toBe("image/gif");
    expect(sniffImageType(new TextEncoder().encode("RIFF\u0001\u0002\u0003\u0004WEBPVP8 "))).toBe("image/webp");
    expect(sniffImageType(new TextEncoder().encode("RIFF\u0001\u0002\u0003\u0004WAVEfmt "))).toBeNull();
    expect(sniffImageType(new TextEncoder().encode("<svg xmlns="))).toBeNull();
    expect(sniffImageType(new Uint8Array())).toBeNull();
  });
});

describe("toBase64", () => {
  it("is standard padded base64, also past one chunk", () => {
    expect(toBase64(new TextEncoder().encode("hi!?"))).toBe("aGkhPw==");
    const big = new Uint8Array(0x8000 * 2 + 3).map((_, i) => i % 251);
    expect(Uint8Array.from(atob(toBase64(big)), (c) => c.charCodeAt(0))).toEqual(big);
  });
});

describe("readImages", () => {
  it("attaches an image by its bytes, whatever its name says, and refuses a non-image with the reason", async () => {
    const files = [
      new File([PNG_1PX], "shot.png", { type: "image/png" }),
      new File(["just text"], "notes.png", { type: "image/png" }),
      new File([PNG_1PX], "", { type: "image/png" }),
    ];
    const { images, refused } = await readImages(files, 0);
    expect(images).toEqual([
      { name: "shot.png", mimeType: "image/png", data: toBase64(PNG_1PX), bytes: PNG_1PX.length },
      { name: "pasted image", mimeType: "image/png", data: toBase64(PNG_1PX), bytes: PNG_1PX.length },
    ]);
    expect(refused).toEqual(["notes.png is not a PNG, JPEG, GIF or WebP image, so it was not attached."]);
  });

  it("refuses an image over the limit, and one that would take the message over it", async () => {
    const big = new File([new Uint8Array(MAX_IMAGE_BYTES + 200 * 1024)], "huge.png");
    const three = new File([PNG_1PX, new Uint8Array(3 * 1024 * 1024 - PNG_1PX.length)], "three.png");
    const { images, refused } = await readImages([big, three, three], 0);
    expect(images.map((i) => i.name)).toEqual(["three.png"]);
    expect(refused).toEqual([
      "huge.png is 5.2 MB; images of up to 5.0 MB can be attached (make it smaller or crop it).",
      "three.png would bring this message's images to 6.0 MB; one message carries up to 5.0 MB of images (send it in the next message).",
    ]);
    // What is attached already counts.
    const after = await readImages([three], 3 * 1024 * 1024);
    expect(after.images).toEqual([]);
    expect(after.refused).toHaveLength(1);
    expect(formatBytes(812)).toBe("812 bytes");
    expect(formatBytes(35_328)).toBe("34.5 KB");
  });
});
