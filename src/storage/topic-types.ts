// A topic as every storage implementation keeps it (the interface the topic
// manager uses is log/topic-storage.ts).

export interface TopicRow {
  topicId: string;
  name: string;
  partitionCount: number;
  configs: Record<string, string>;
}
