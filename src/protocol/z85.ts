// Z85 (ZeroMQ RFC 32), the text form of CurveZMQ keys: a node names its Curve public key in its config request
// (`ccpk`, reference 2.2) as 40 Z85 characters, and ZAP hands the server the same key as 32 raw bytes.

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const VALUES = new Map([...ALPHABET].map((c, i) => [c, i]));

/** Z85 text of a 32-byte Curve key. */
export const CURVE_KEY_TEXT_LENGTH = 40;

/**
 * The bytes of Z85 `text`, or undefined when it is not Z85: a length that is not a multiple of 5, a character
 * outside the alphabet, or a group of five worth more than 32 bits (85^5 exceeds 2^32).
 */
export function z85Decode(text: string): Buffer | undefined {
  if (text.length % 5 !== 0) return undefined;
  const out = Buffer.alloc((text.length / 5) * 4);
  for (let group = 0; group < text.length / 5; group++) {
    let value = 0;
    for (let i = 0; i < 5; i++) {
      const digit = VALUES.get(text[group * 5 + i] as string);
      if (digit === undefined) return undefined;
      value = value * 85 + digit;
    }
    if (value > 0xffff_ffff) return undefined;
    out.writeUInt32BE(value, group * 4);
  }
  return out;
}

/** The 32 raw bytes of a Curve public key written in Z85, or undefined when `text` is not one. */
export function curveKeyBytes(text: string): Buffer | undefined {
  return text.length === CURVE_KEY_TEXT_LENGTH ? z85Decode(text) : undefined;
}
