"""The Course page (/course): every task of the course in order, the page each is on, the progress, a way on."""
