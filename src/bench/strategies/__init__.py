"""Built-in compaction strategies. Each module holds one strategy; its config is conf/strategy/<name>.yaml."""
