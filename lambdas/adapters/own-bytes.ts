// A Buffer's bytes as a plain Uint8Array without a second copy of a large one: what the file adapters hand on.
/**
 * A view when the Buffer owns its memory (a large one: a 10 MB attachment is not copied again), a copy when it
 * may be a slice of node's shared pool (small ones), which a view would keep alive and expose.
 */
export function ownBytes(buffer: Buffer): Uint8Array {
  return buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength
    ? new Uint8Array(buffer.buffer, 0, buffer.byteLength)
    : new Uint8Array(buffer);
}
