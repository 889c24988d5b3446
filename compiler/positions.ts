// Offset <-> line/column mapping for one text. Lines and columns are 1-based, like editors show them.
import type { Range } from './types.js';

export class LineIndex {
  private readonly lineStarts: number[] = [0];

  constructor(
    text: string,
    /** Line number (1-based) of the first line of `text` in the file it came from. */
    private readonly firstLine = 1,
    /** Column (1-based) of the first character of `text` on its first line. */
    private readonly firstColumn = 1,
  ) {
    for (let i = 0; i < text.length; i += 1) {
      if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
    }
  }

  point(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= offset) low = mid;
      else high = mid - 1;
    }
    const column = offset - (this.lineStarts[low] ?? 0) + 1;
    return { line: this.firstLine + low, column: low === 0 ? column + this.firstColumn - 1 : column };
  }

  range(start: number, end: number): Range {
    const a = this.point(start);
    const b = this.point(Math.max(start, end));
    return { line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
  }
}

export function pointRange(line: number, column: number): Range {
  return { line, column, endLine: line, endColumn: column };
}

export const FILE_START: Range = pointRange(1, 1);
