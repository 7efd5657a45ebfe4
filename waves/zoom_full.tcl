# Fit the whole dump in the window (used by `make screenshot`).
gtkwave::/Time/Zoom/Zoom_Full
