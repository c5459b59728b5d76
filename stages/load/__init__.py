"""Step 3, load: render each lineage as a transcript (``render``) and cut it to a budget
around the matches (``truncate``); ``load`` is the stage."""
