// Images people attach to a prompt (pasted, dropped or chosen with the
// attach button): read in the page, checked to be a PNG, JPEG, GIF or
// WebP by their first bytes, and kept as base64 for the ACP `image`
// block. Riot downscales them to the model's limit; the limit here keeps
// one prompt well inside the server's 8 MB message limit (base64 adds a
// third).

import type { PromptImage } from "../bridge";

/** An image attached to a prompt, as the composer and the conversation show it. */
export interface AttachedImage extends PromptImage {
  /** The file's name (`pasted image` when the clipboard gave none). */
  name: string;
  /** Size of the file in bytes. */
  bytes: number;
}

/** The most image bytes one prompt carries (all its images together). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** What the attach button's file chooser offers. */
export const IMAGE_ACCEPT = "image/png,image/jpeg,image/gif,image/webp";

/** The media type of an image by its first bytes, or `null` when it is not one Riot reads. */
export function sniffImageType(head: Uint8Array): string | null {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38) && (head[4] === 0x37 || head[4] === 0x39) && head[5] === 0x61) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && head[8] === 0x57 && head[9] === 0x45 && head[10] === 0x42 && head[11] === 0x50) {
    return "image/webp";
  }
  return null;
}

/** `bytes` as standard, padded base64. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) {
    binary += String.fromCharCode(...bytes.subarray(i, i + step));
  }
  return btoa(binary);
}

/** `n` bytes for people: `812 bytes`, `34.5 KB`, `6.2 MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** What became of files offered to the composer: the images to attach and one sentence per file refused. */
export interface ReadOutcome {
  images: AttachedImage[];
  refused: string[];
}

function fileName(file: File): string {
  return file.name.trim() === "" ? "pasted image" : file.name;
}

/**
 * Reads `files` as images for a prompt that already carries
 * `alreadyBytes` of images: a file that is not a PNG, JPEG, GIF or WebP,
 * or that would take the prompt's images over `MAX_IMAGE_BYTES`, is
 * refused with a sentence saying so.
 */
export async function readImages(files: readonly File[], alreadyBytes: number): Promise<ReadOutcome> {
  const images: AttachedImage[] = [];
  const refused: string[] = [];
  let total = alreadyBytes;
  for (const file of files) {
    const name = fileName(file);
    if (file.size > MAX_IMAGE_BYTES) {
      refused.push(
        `${name} is ${formatBytes(file.size)}; images of up to ${formatBytes(MAX_IMAGE_BYTES)} can be attached (make it smaller or crop it).`,
      );
      continue;
    }
    if (total + file.size > MAX_IMAGE_BYTES) {
      refused.push(
        `${name} would bring this message's images to ${formatBytes(total + file.size)}; one message carries up to ${formatBytes(MAX_IMAGE_BYTES)} of images (send it in the next message).`,
      );
      continue;
    }
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await file.arrayBuffer());
    } catch {
      refused.push(`${name} could not be read; try attaching it again.`);
      continue;
    }
    const mimeType = sniffImageType(bytes.subarray(0, 16));
    if (mimeType === null) {
      refused.push(`${name} is not a PNG, JPEG, GIF or WebP image, so it was not attached.`);
      continue;
    }
    total += bytes.length;
    images.push({ name, mimeType, data: toBase64(bytes), bytes: bytes.length });
  }
  return { images, refused };
}

/** The image as a `data:` URL for an `<img>`. */
export function imageUrl(image: PromptImage): string {
  return `data:${image.mimeType};base64,${image.data}`;
}
