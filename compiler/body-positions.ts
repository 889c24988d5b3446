// Offsets in a protocol body <-> file positions. Parsed ranges are file positions (1-based line and
// column); rules that scan the raw body text (`document.body`) need both directions.
import { LineIndex } from './positions.js';
import type { CapabilityDocument, Range } from './types.js';

export class BodyPositions {
  private readonly starts: number[] = [0];
  private readonly index: LineIndex;

  constructor(private readonly document: CapabilityDocument) {
    const { body } = document;
    for (let i = 0; i < body.length; i += 1) if (body.charCodeAt(i) === 10) this.starts.push(i + 1);
    this.index = new LineIndex(body, document.bodyStartLine, 1);
  }

  /** Body offset of a file position (clamped to the body). */
  offset(line: number, column: number): number {
    const start = this.starts[line - this.document.bodyStartLine];
    if (start === undefined) return line < this.document.bodyStartLine ? 0 : this.document.body.length;
    return Math.min(start + column - 1, this.document.body.length);
  }

  /** Body offsets [start, end) of a file range. */
  offsets(range: Range): [number, number] {
    return [this.offset(range.line, range.column), this.offset(range.endLine, range.endColumn)];
  }

  /** File range of body offsets [start, end). */
  range(start: number, end: number): Range {
    return this.index.range(start, end);
  }
}
