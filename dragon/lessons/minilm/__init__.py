"""The real pretrained model of chapter 4 (MiniLM, shipped weights): its WordPiece tokenizer and its BERT encoder."""
