// Messages from nodes whose session (or whose organization's node records) this process is reading: the node just
// moved here, or its organization's owner just opened it. Each is handled again once its read is done, instead of
// dropped; a node's first answer after it moved (a result it could not send while its gateway was gone) is often
// such a message. Bounded: past the most held, messages are dropped as any other that does not verify.

/** Messages held at most while their reads run (each at most a max_body_size). */
export const MAX_HELD_FOR_READ = 500;

export class HeldForRead {
  private held = 0;

  /** Runs `again` once `read` settles, unless as many messages are held already: then false. */
  hold(read: Promise<void>, again: () => void): boolean {
    if (this.held >= MAX_HELD_FOR_READ) return false;
    this.held += 1;
    void read.then(() => {
      this.held -= 1;
      again();
    });
    return true;
  }
}
