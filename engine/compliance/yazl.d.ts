// The part of yazl 3 (https://github.com/thejoshwolfe/yazl) the evidence pack uses; the package ships no types.
declare module 'yazl' {
  import { EventEmitter } from 'node:events';
  import type { Readable } from 'node:stream';

  export interface EntryOptions {
    mtime?: Date;
    mode?: number;
    compress?: boolean;
    compressionLevel?: number;
    forceZip64Format?: boolean;
    size?: number;
  }

  export class ZipFile extends EventEmitter {
    readonly outputStream: Readable;
    addReadStream(readStream: Readable, metadataPath: string, options?: EntryOptions): void;
    addBuffer(buffer: Buffer, metadataPath: string, options?: Omit<EntryOptions, 'size'>): void;
    end(options?: { forceZip64Format?: boolean; comment?: string | Buffer }, calculatedTotalSizeCallback?: (size: number) => void): void;
  }
}
