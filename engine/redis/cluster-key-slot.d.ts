// The part of cluster-key-slot (https://github.com/actionably/cluster-key-slot, ioredis's own) the engine uses; the package ships no types.
declare module 'cluster-key-slot' {
  /** The Redis Cluster slot (0-16383) of a key: CRC16 of its hash tag, or of the whole key when it has none. */
  function calculateSlot(key: string | Buffer): number;
  export default calculateSlot;
}
