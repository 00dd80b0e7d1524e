"""Tooling for the book, kept out of the library: ``pip install markeval`` does not ship it.

These modules need the book's environment (``requirements.txt``: nbformat, PyYAML,
jupyter-book), which the package does not declare. Run them from the repository root:
``python -m tools.student_edition --notebooks`` (the assignments' student notebooks in
``book/student/``), ``python -m tools.student_edition _build/student`` (``make student``) and
``python -m tools.instructor_edition`` (``make instructor``), ``python -m tools.course``
(``make course``: an nbgrader course folder from the instructor notebooks), ``python -m
tools.pdf`` (the book's PDF, part of ``make book``), ``python -m tools.chapter_map --write`` (the
chapter dependency map of the course page), ``python -m tools.check_pages STEM`` (a quick look
at built pages in headless Chromium, :mod:`tools.browser`), ``python -m tools.setup_cells`` (every
page's setup cell, from what it needs: :mod:`tools.colab_needs`), ``python -m tools.distributions
OUTDIR`` (the release's sdist and wheel, checked) and ``python -m tools.colab_index fill DIR``
(the wheelhouse behind the Colab-path test, ``make install``).
"""
